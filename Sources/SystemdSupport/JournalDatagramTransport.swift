import Glibc

/// Sends entries in the native protocol to a datagram socket at a path of one's choosing, as
/// journald's own socket would receive them from `sd_journal_sendv`.
///
/// Used by tests (libsystemd's socket path is fixed) and usable for a journald in another mount
/// namespace. Entries larger than one datagram fail with `-EMSGSIZE` (no memfd fallback).
public struct JournalDatagramTransport: JournalTransport {
    public let socketPath: String

    public init(socketPath: String) {
        self.socketPath = socketPath
    }

    @discardableResult
    public func send(_ fields: [JournalField]) -> Int32 {
        let datagram = JournalWireFormat.encode(fields)
        let fd = socket(AF_UNIX, Int32(SOCK_DGRAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        guard fd >= 0 else { return -errno }
        defer { close(fd) }
        guard var address = UnixSocketAddress.make(path: socketPath) else { return -ENAMETOOLONG }
        let sent = datagram.withUnsafeBytes { bytes in
            withUnsafePointer(to: &address) { pointer in
                pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) { sa in
                    sendto(fd, bytes.baseAddress, bytes.count, Int32(MSG_NOSIGNAL), sa,
                           socklen_t(MemoryLayout<sockaddr_un>.size))
                }
            }
        }
        return sent < 0 ? -errno : 0
    }
}
