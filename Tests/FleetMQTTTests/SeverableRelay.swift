import Foundation
import Glibc
import Synchronization

/// A TCP relay from a loopback port to a broker's, that a test can sever: every connection
/// through it ends at once on both sides, without an MQTT DISCONNECT — to the broker exactly
/// what a killed gateway process looks like (the kernel closes its socket), so the broker
/// publishes the client's Will — and the port refuses new connections, so the client cannot come
/// back. Deterministic where a short keepalive would make the test wait on the broker's timer.
/// Its threads run until `sever`.
final class SeverableRelay: Sendable {
    let port: Int
    private let listener: Int32
    private let sockets: Mutex<Sockets>

    /// Descriptors are shut down by `sever` only while they are in `open`, and closed by their
    /// own thread only after leaving it: a shutdown never reaches a number the kernel reused.
    private struct Sockets {
        var open: Set<Int32> = []
        var severed = false
        /// Partitioned: new connections are closed at once (until `heal`).
        var refusing = false
        /// The broker's bytes to the clients are dropped (`dropReplies`).
        var droppingReplies = false
    }

    struct Failure: Error, CustomStringConvertible {
        let description: String
    }

    init(toPort target: Int) throws {
        let listener = socket(AF_INET, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        guard listener >= 0 else { throw Failure(description: "socket: errno \(errno)") }
        var address = Self.loopback(port: 0)
        let bound = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(listener, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
        }
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        let named = withUnsafeMutablePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(listener, $0, &length) }
        }
        guard bound == 0, named == 0, listen(listener, 8) == 0 else {
            close(listener)
            throw Failure(description: "cannot listen on loopback: errno \(errno)")
        }
        port = Int(UInt16(bigEndian: address.sin_port))
        self.listener = listener
        sockets = Mutex(Sockets(open: [listener]))
        Thread.detachNewThread { [self] in accept(on: listener, target: target) }
    }

    /// A partition: ends every connection through the relay, as `sever` does, but keeps
    /// listening and closes each new connection at once until `heal` — a gateway cut from the
    /// broker whose client keeps trying.
    func partition() {
        sockets.withLock { sockets in
            sockets.refusing = true
            for fd in sockets.open where fd != listener { shutdown(fd, Int32(SHUT_RDWR)) }
        }
    }

    /// Ends the partition: the next connection goes through.
    func heal() {
        sockets.withLock { $0.refusing = false }
    }

    /// From now on, what the broker sends the clients is dropped, while what they send still
    /// reaches it: a broker that takes messages and acknowledges none (PUBACKs never come).
    func dropReplies() {
        sockets.withLock { $0.droppingReplies = true }
    }

    /// Ends every connection through the relay and stops listening.
    func sever() {
        sockets.withLock { sockets in
            sockets.severed = true
            for fd in sockets.open { shutdown(fd, Int32(SHUT_RDWR)) }
        }
    }

    private static func loopback(port: UInt16) -> sockaddr_in {
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        address.sin_port = port.bigEndian
        return address
    }

    private func accept(on listener: Int32, target: Int) {
        while true {
            let client = Glibc.accept(listener, nil, nil)
            if client < 0, errno == EINTR { continue }
            guard client >= 0 else { break }
            let upstream = socket(AF_INET, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
            var address = Self.loopback(port: UInt16(target))
            let connected = upstream >= 0 && withUnsafePointer(to: &address) {
                $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(upstream, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
            } == 0
            let admitted = connected && sockets.withLock { sockets in
                guard !sockets.severed, !sockets.refusing else { return false }
                sockets.open.formUnion([client, upstream])
                return true
            }
            guard admitted else {
                close(client)
                if upstream >= 0 { close(upstream) }
                continue
            }
            Thread.detachNewThread { [self] in pump(client, upstream) }
        }
        sockets.withLock { _ = $0.open.remove(listener) }
        close(listener)
    }

    /// Copies bytes both ways (`first`: the client, `second`: the broker) until either side
    /// ends, then ends both.
    private func pump(_ first: Int32, _ second: Int32) {
        var buffer = [UInt8](repeating: 0, count: 16_384)
        var fds = [pollfd(fd: first, events: Int16(POLLIN), revents: 0), pollfd(fd: second, events: Int16(POLLIN), revents: 0)]
        copying: while true {
            if poll(&fds, 2, -1) < 0 {
                if errno == EINTR { continue }
                break
            }
            for index in 0..<2 where fds[index].revents != 0 {
                let from = fds[index].fd
                let to = fds[1 - index].fd
                let count = buffer.withUnsafeMutableBytes { read(from, $0.baseAddress, $0.count) }
                guard count > 0 else { break copying }
                if from == second, sockets.withLock({ $0.droppingReplies }) { continue }
                var sent = 0
                while sent < count {
                    let written = buffer.withUnsafeBytes { write(to, $0.baseAddress.map { $0 + sent }, count - sent) }
                    guard written > 0 else { break copying }
                    sent += written
                }
            }
        }
        sockets.withLock { sockets in
            for fd in [first, second] {
                shutdown(fd, Int32(SHUT_RDWR))
                sockets.open.remove(fd)
            }
        }
        close(first)
        close(second)
    }
}
