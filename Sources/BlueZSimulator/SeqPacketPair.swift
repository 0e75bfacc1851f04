import Glibc

/// A connected pair of `AF_UNIX` `SOCK_SEQPACKET` sockets, as bluetoothd hands out for
/// AcquireNotify/AcquireWrite: one end goes to the client, one stays here.
enum SeqPacketPair {
    /// Returns (local, remote). Both are close-on-exec; the local end is non-blocking, so a
    /// client that stops reading costs dropped notifications, never a stalled simulator.
    static func make() throws -> (local: Int32, remote: Int32) {
        var fds: [Int32] = [-1, -1]
        let type = Int32(SOCK_SEQPACKET.rawValue) | Int32(SOCK_CLOEXEC.rawValue)
        guard socketpair(AF_UNIX, type, 0, &fds) == 0 else {
            throw BlueZError.failed("socketpair: \(String(cString: strerror(errno)))")
        }
        let flags = fcntl(fds[0], F_GETFL)
        _ = fcntl(fds[0], F_SETFL, flags | O_NONBLOCK)
        return (fds[0], fds[1])
    }
}
