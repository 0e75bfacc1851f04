import Fleet
import FleetCore
import Glibc
import Testing
import TestSupport

@Suite("Reading AcquireNotify sockets")
struct NotificationSocketPollerTests {
    struct Received: Sendable, Equatable {
        let device: DeviceID
        let characteristic: String
        let bytes: [UInt8]
    }

    @Test func eachDatagramIsOneValueAndAHangUpForgetsTheSocket() async throws {
        let device = DeviceID(address: try #require(BluetoothAddress("AA:BB:CC:00:00:09")))
        let (stream, sink) = AsyncStream<Received>.makeStream()
        let poller = try NotificationSocketPoller { device, characteristic, bytes in
            sink.yield(Received(device: device, characteristic: characteristic, bytes: bytes))
        }
        defer { poller.stop() }
        var pair: [Int32] = [-1, -1]
        try #require(socketpair(AF_UNIX, Int32(SOCK_SEQPACKET.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0, &pair) == 0)
        poller.add(fd: pair[0], device: device, characteristic: "2a37", mtu: 247)
        for payload: [UInt8] in [[0x06, 70], [0x06, 71, 0, 0], [0x06, 72]] {
            _ = payload.withUnsafeBytes { send(pair[1], $0.baseAddress, $0.count, 0) }
        }
        let values = try await withTimeout(.seconds(5), "three notifications") {
            var values: [[UInt8]] = []
            for await received in stream {
                values.append(received.bytes)
                if values.count == 3 { break }
            }
            return values
        }
        #expect(values == [[0x06, 70], [0x06, 71, 0, 0], [0x06, 72]], "datagram boundaries are kept")
        close(pair[1])  // BlueZ closes the socket when the link drops
        try await withTimeout(.seconds(5), "the socket to be forgotten") {
            while poller.socketCount > 0 { await Task.yield() }
        }
    }
}
