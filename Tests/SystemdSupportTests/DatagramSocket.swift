import Foundation
import Glibc
@testable import SystemdSupport

/// A unix datagram socket bound in a fresh temporary directory: stands in for journald's or
/// systemd's notification socket, so a test reads exactly what the code under test sent.
final class DatagramSocket: Sendable {
    let directory: URL
    let path: String
    private let fd: Int32

    init() throws {
        directory = FileManager.default.temporaryDirectory
            .appendingPathComponent("wf-sock-\(UInt32.random(in: 0...UInt32.max))", isDirectory: true)
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        path = directory.appendingPathComponent("s").path
        fd = socket(AF_UNIX, Int32(SOCK_DGRAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        guard fd >= 0 else { throw POSIXError(.init(rawValue: errno) ?? .EIO) }
        guard var address = UnixSocketAddress.make(path: path) else { throw POSIXError(.ENAMETOOLONG) }
        let bound = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                bind(fd, $0, socklen_t(MemoryLayout<sockaddr_un>.size))
            }
        }
        guard bound == 0 else { throw POSIXError(.init(rawValue: errno) ?? .EIO) }
    }

    deinit {
        close(fd)
        try? FileManager.default.removeItem(at: directory)
    }

    /// The next datagram, waiting at most `timeout` on a thread of its own (so a blocked wait
    /// never occupies one of the few cooperative-pool threads the code under test needs).
    func receive(timeout: Duration = .seconds(5)) async throws -> [UInt8] {
        let fd = self.fd
        let milliseconds = Int32(timeout.components.seconds * 1000 + timeout.components.attoseconds / 1_000_000_000_000_000)
        let result: [UInt8]? = await withCheckedContinuation { continuation in
            Thread {
                var poller = pollfd(fd: fd, events: Int16(POLLIN), revents: 0)
                guard poll(&poller, 1, milliseconds) == 1 else { return continuation.resume(returning: nil) }
                var buffer = [UInt8](repeating: 0, count: 256 * 1024)
                let count = recv(fd, &buffer, buffer.count, 0)
                continuation.resume(returning: count < 0 ? nil : Array(buffer[0..<count]))
            }.start()
        }
        guard let result else { throw NoDatagram(path: path, timeout: timeout) }
        return result
    }

    /// Whether a datagram is waiting right now (without waiting for one).
    func hasPending() -> Bool {
        var poller = pollfd(fd: fd, events: Int16(POLLIN), revents: 0)
        return poll(&poller, 1, 0) == 1
    }

    func receiveText(timeout: Duration = .seconds(5)) async throws -> String {
        String(decoding: try await receive(timeout: timeout), as: UTF8.self)
    }
}

/// No datagram arrived in time.
struct NoDatagram: Error, CustomStringConvertible {
    let path: String
    let timeout: Duration
    var description: String { "no datagram on \(path) within \(timeout)" }
}
