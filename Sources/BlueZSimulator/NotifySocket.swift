import Glibc

/// The simulator's end of an AcquireNotify socket: each notification is one datagram.
///
/// Owned by the simulator actor (not Sendable); closing it (or releasing it) closes the socket,
/// which the client sees as end of file, as on a BlueZ disconnect.
///
/// It may carry a tap (`tapNotifySockets`): a benchmark's copy of every datagram, sent by the
/// same call, and closed with it.
final class NotifySocket {
    private var fd: Int32
    private var tap: NotifySocket?
    /// The tap and this socket take turns at being sent to first: the receiver woken first pays
    /// differently for its wake-up (the daemon's fd path cost 1.6–1.8× the floor when the tap
    /// always went first and 2.8–3.4× when the daemon's socket did, in the same hour), so neither
    /// place may stay with one receiver.
    private var tapGoesFirst = false

    init(fd: Int32) { self.fd = fd }

    enum SendResult { case sent, dropped, closed }

    /// From now on every datagram goes to `tap` as well (a tap already there is closed).
    func setTap(_ tap: NotifySocket) {
        self.tap?.close()
        self.tap = tap
    }

    /// Sends one datagram, and its copy to the tap if there is one. `.dropped` when the client's
    /// queue is full (the client is too slow), `.closed` when the client closed its end; the
    /// tap's own outcome is its own (a full tap drops the copy, a closed one is let go).
    func send(_ payload: [UInt8]) -> SendResult {
        guard fd >= 0 else { return .closed }
        guard tap != nil else { return sendOwn(payload) }
        let tapFirst = tapGoesFirst
        tapGoesFirst.toggle()
        if tapFirst { sendToTap(payload) }
        let result = sendOwn(payload)
        if !tapFirst && result == .sent { sendToTap(payload) }
        return result
    }

    private func sendToTap(_ payload: [UInt8]) {
        guard let tap, tap.send(payload) == .closed else { return }
        tap.close()
        self.tap = nil
    }

    private func sendOwn(_ payload: [UInt8]) -> SendResult {
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
        tap?.close()
        tap = nil
        guard fd >= 0 else { return }
        _ = Glibc.close(fd)
        fd = -1
    }

    deinit { close() }
}
