import Foundation
import Glibc

/// The benchmark's stand-in for systemd's notify socket: a datagram socket `wearfleetd` sends
/// `READY=1` (and `STATUS=…`) to, so the benchmark can time READY as systemd would see it.
final class NotifyListener {
    let path: String
    private let fd: Int32

    init(path: String) throws {
        self.path = path
        unlink(path)
        fd = socket(AF_UNIX, Int32(SOCK_DGRAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        guard fd >= 0 else { throw BenchError("notify socket: errno \(errno)") }
        var address = sockaddr_un()
        address.sun_family = sa_family_t(AF_UNIX)
        let bytes = Array(path.utf8)
        guard bytes.count < MemoryLayout.size(ofValue: address.sun_path) else { throw BenchError("notify socket path too long: \(path)") }
        withUnsafeMutableBytes(of: &address.sun_path) { buffer in
            for (index, byte) in bytes.enumerated() { buffer[index] = byte }
        }
        let bound = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, socklen_t(MemoryLayout<sockaddr_un>.size)) }
        }
        guard bound == 0 else { throw BenchError("notify socket: bind failed, errno \(errno)") }
    }

    /// Waits for a datagram containing the line `READY=1`; returns when it arrived
    /// (monotonic seconds), or throws after `seconds`.
    func waitForReady(within seconds: Double) throws -> Double {
        let deadline = MonotonicTime.seconds + seconds
        var buffer = [UInt8](repeating: 0, count: 4096)
        while true {
            let left = deadline - MonotonicTime.seconds
            guard left > 0 else { throw BenchError("no READY=1 within \(Int(seconds)) s") }
            var poller = pollfd(fd: fd, events: Int16(POLLIN), revents: 0)
            guard poll(&poller, 1, Int32(left * 1000) + 1) > 0 else { continue }
            let count = recv(fd, &buffer, buffer.count, 0)
            guard count > 0 else { continue }
            let text = String(decoding: buffer[0..<count], as: UTF8.self)
            if text.split(separator: "\n").contains("READY=1") { return MonotonicTime.seconds }
        }
    }

    deinit {
        close(fd)
        unlink(path)
    }
}
