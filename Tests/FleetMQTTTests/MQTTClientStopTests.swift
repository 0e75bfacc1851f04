import FleetCore
import Foundation
@testable import FleetMQTT
import Glibc
import Logging
import Testing
import TestSupport

/// Stopping the client while its CONNECT is unanswered, against a listener that never answers.
@Suite struct MQTTClientStopTests {
    /// A loopback TCP listener; each call blocks at most 10 s (SO_RCVTIMEO).
    final class SilentListener: Sendable {
        let fd: Int32
        let port: Int

        /// `backlog` 0 admits one connection to the accept queue; a second waits for an `accept`.
        init(backlog: Int32 = 1) throws {
            let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
            self.fd = fd
            var address = sockaddr_in()
            address.sin_family = sa_family_t(AF_INET)
            address.sin_addr.s_addr = inet_addr("127.0.0.1")
            var length = socklen_t(MemoryLayout<sockaddr_in>.size)
            let bound = withUnsafeMutablePointer(to: &address) { pointer in
                pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) { socketAddress in
                    bind(fd, socketAddress, length) == 0 && listen(fd, backlog) == 0 && getsockname(fd, socketAddress, &length) == 0
                }
            }
            guard fd >= 0, bound else { throw MQTTClientError(message: "listener: errno \(errno)") }
            port = Int(UInt16(bigEndian: address.sin_port))
            Self.timeout(fd)
        }

        deinit { close(fd) }

        static func timeout(_ fd: Int32) {
            var limit = timeval(tv_sec: 10, tv_usec: 0)
            setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &limit, socklen_t(MemoryLayout<timeval>.size))
        }

        /// The first connection, or -1 after 10 s.
        func acceptOne() -> Int32 {
            let connection = accept(fd, nil, nil)
            if connection >= 0 { Self.timeout(connection) }
            return connection
        }

        /// What arrives on `connection` in one read (at most 10 s).
        static func readSome(_ connection: Int32) -> [UInt8] {
            var buffer = [UInt8](repeating: 0, count: 512)
            let count = read(connection, &buffer, buffer.count)
            return count > 0 ? Array(buffer.prefix(count)) : []
        }
    }

    /// A stop while CONNECT is out sends DISCONNECT: the broker then publishes no Will, and no
    /// late connection with the client id is left to drop the next client's.
    ///
    /// The listener's blocking calls run on threads of their own (on the concurrency pool they
    /// held its few threads, up to 10 s each, from every other test), and the CONNACK deadline
    /// (the keep-alive) is far beyond any stall of a loaded machine: the stop must find the
    /// client still waiting for CONNACK. (With a 30 s keep-alive, a run on two loaded cores gave
    /// up on CONNACK first, closed without DISCONNECT, and failed.)
    @Test func aStopBeforeCONNACKSendsDISCONNECT() async throws {
        let listener = try SilentListener()
        let client = try MQTTClient(
            settings: MQTTConnectionSettings(host: "127.0.0.1", port: listener.port, clientID: "silent", keepAlive: 3600),
            random: SeededRandom(seed: 3), logger: Logger(label: "test"))
        let connection = try await HTTPTestClient.onThread { listener.acceptOne() }
        try #require(connection >= 0)
        defer { close(connection) }
        let connect = try await HTTPTestClient.onThread { SilentListener.readSome(connection) }
        #expect(connect.first == 0x10)  // CONNECT
        let ended = await client.stop(final: MQTTMessage(topic: "g/status", text: "offline", qos: 1, retain: true))
        #expect(ended)
        var after: [UInt8] = []
        while true {
            let more = try await HTTPTestClient.onThread { SilentListener.readSome(connection) }
            if more.isEmpty { break }
            after += more
        }
        // CONNECT may have been read in pieces: DISCONNECT (0xE0 0x00) is the last packet, alone.
        #expect(Array((connect + after).suffix(2)) == [0xE0, 0x00])
    }

    /// A stop while the client's TCP connect hangs (the listener's accept queue is full, so the
    /// kernel drops its SYNs and retries them for about two minutes) returns after its timeout:
    /// the daemon's stop must not wait for the connect, or systemd kills it at `TimeoutStopSec`.
    /// The thread ends later, once the connect fails.
    @Test func aStopDuringAConnectThatHangsReturnsAfterItsTimeout() async throws {
        let listener = try SilentListener(backlog: 0)
        let port = listener.port
        // The one connection backlog 0 admits, never accepted: the queue is full after it.
        let filler = try HTTPTestClient.connect(host: "127.0.0.1", port: port)
        defer { close(filler) }
        let client = try MQTTClient(
            settings: MQTTConnectionSettings(host: "127.0.0.1", port: port, clientID: "hanging", keepAlive: 60),
            random: SeededRandom(seed: 4), logger: Logger(label: "test"))
        // The client's SYN is out, unanswered: its thread is inside `mosquitto_connect`.
        try await withTimeout(.seconds(30), "the client's connect to hang in SYN_SENT") {
            while !Self.synSent(toPort: port) { try await Task.sleep(for: .milliseconds(20)) }
        }
        let ended = await client.stop(final: nil, timeout: .seconds(1), closingGrace: .seconds(1))
        #expect(!ended)
        // Returned while the connect still hangs (until the listener goes), not after it failed.
        #expect(!client.threadHasEnded, "the stop waited for the connect")
        // Accepting the filler makes room: the client's next SYN is answered, its connect
        // returns, the thread sees the stop and ends.
        let accepted = try await HTTPTestClient.onThread { listener.acceptOne() }
        #expect(accepted >= 0)
        if accepted >= 0 { close(accepted) }
        await client.threadEnded()
    }

    /// Whether a socket of this machine is in SYN_SENT towards 127.0.0.1:`port` (/proc/net/tcp:
    /// addresses in hex, state 02).
    static func synSent(toPort port: Int) -> Bool {
        guard let table = procFile("/proc/net/tcp") else { return false }
        let remote = String(format: "0100007F:%04X", port)
        return table.split(separator: "\n").contains { line in
            let fields = line.split(separator: " ")
            return fields.count > 3 && fields[2] == remote && fields[3] == "02"
        }
    }
}
