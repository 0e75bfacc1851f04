import Glibc

/// The simulator's end of an AcquireNotify socket: each notification is one datagram.
///
/// Owned by the simulator actor (not Sendable); closing it (or releasing it) closes the socket,
/// which the client sees as end of file, as on a BlueZ disconnect.
final class NotifySocket {
    private var fd: Int32

    init(fd: Int32) { self.fd = fd }

    enum SendResult { case sent, dropped, closed }

    /// Sends one datagram. `.dropped` when the client's queue is full (the client is too slow),
    /// `.closed` when the client closed its end.
    func send(_ payload: [UInt8]) -> SendResult {
        guard fd >= 0 else { return .closed }
        let written = payload.withUnsafeBytes { Glibc.send(fd, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL | MSG_DONTWAIT)) }
        if written >= 0 { return .sent }
        return errno == EAGAIN || errno == EWOULDBLOCK || errno == ENOBUFS ? .dropped : .closed
    }

    /// Whether the client has closed its end. BlueZ watches the socket and releases the
    /// acquisition as soon as the client hangs up; the simulator asks when it matters (at the next
    /// send, and before a new session is refused as `Notify acquired`).
    var peerHasClosed: Bool {
        guard fd >= 0 else { return true }
        var watched = pollfd(fd: fd, events: 0, revents: 0)
        return poll(&watched, 1, 0) == 1 && watched.revents & Int16(POLLHUP | POLLERR) != 0
    }

    func close() {
        guard fd >= 0 else { return }
        _ = Glibc.close(fd)
        fd = -1
    }

    deinit { close() }
}
