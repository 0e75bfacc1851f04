import Fleet
import FleetCore
import Glibc

/// The metrics endpoint's poll loop: one thread, non-blocking sockets, every connection with a
/// deadline. A slow or hostile client costs one slot until its deadline and never delays another
/// client's scrape; the daemon's actors never wait for a client.
final class EndpointLoop {
    private let listener: Int32
    private let mailbox: EndpointMailbox
    private let limits: MetricsEndpoint.Limits
    private let render: @Sendable () async -> [UInt8]
    private let clock = SystemMonotonicClock()
    private var connections: [UInt64: HTTPConnection] = [:]
    private var nextID: UInt64 = 0
    /// Set when accepting failed for want of descriptors: the listener stays readable, so it is
    /// left out of `poll` for a moment instead of waking the loop again at once.
    private var listenerPausedUntil: MonotonicInstant?
    static let exhaustionPause: Duration = .milliseconds(100)

    init(listener: Int32, mailbox: EndpointMailbox, limits: MetricsEndpoint.Limits, render: @escaping @Sendable () async -> [UInt8]) {
        self.listener = listener
        self.mailbox = mailbox
        self.limits = limits
        self.render = render
    }

    /// Serves until the mailbox says stop, then closes every client connection.
    func run() {
        while !mailbox.isStopping {
            for (id, response) in mailbox.takeResponses() {
                guard let connection = connections[id], connection.phase == .rendering else { continue }
                connection.startWriting(response)
            }
            let order = Array(connections.keys)
            if let pausedUntil = listenerPausedUntil, clock.now() >= pausedUntil { listenerPausedUntil = nil }
            let listenerEvents = listenerPausedUntil == nil ? Int16(POLLIN) : 0
            var fds = [
                pollfd(fd: listener, events: listenerEvents, revents: 0), pollfd(fd: mailbox.readEnd, events: Int16(POLLIN), revents: 0),
            ]
            for id in order {
                // A connection in the writing phase may be writable at once: poll tells us.
                fds.append(pollfd(fd: connections[id]?.fd ?? -1, events: connections[id]?.pollEvents ?? 0, revents: 0))
            }
            let ready = poll(&fds, nfds_t(fds.count), pollTimeout())
            // EINTR and ENOMEM are passing; anything else (EFAULT, EINVAL) is a bug here, and
            // retrying would spin: stop serving (stop() still works).
            if ready < 0, errno != EINTR, errno != ENOMEM { break }
            let now = clock.now()
            if fds[1].revents != 0 { mailbox.drain() }
            if fds[0].revents & Int16(POLLIN) != 0 { acceptPending(now: now) }
            for (index, id) in order.enumerated() where fds[index + 2].revents != 0 {
                guard let connection = connections[id] else { continue }
                handle(connection, revents: fds[index + 2].revents, now: now)
            }
            expire(now: now)
        }
        for connection in connections.values { close(connection.fd) }
        connections.removeAll()
    }

    /// Milliseconds until the nearest deadline (rounded up), at most a second; -1 (no timeout)
    /// without any: the mailbox's descriptor wakes the loop for responses and for stop, so an
    /// endpoint nobody scrapes sleeps instead of waking every second.
    private func pollTimeout() -> Int32 {
        let deadlines = connections.values.map(\.deadline) + (listenerPausedUntil.map { [$0] } ?? [])
        guard let nearest = deadlines.min() else { return -1 }
        let nanoseconds = nearest.nanoseconds - clock.now().nanoseconds
        return Int32(max(0, min(1000, (nanoseconds + 999_999) / 1_000_000)))
    }

    private func acceptPending(now: MonotonicInstant) {
        for _ in 0..<limits.maxConnections {
            let fd: Int32
            switch ListeningSocket.acceptConnection(listener) {
            case .connection(let accepted): fd = accepted
            case .none: return
            case .exhausted:
                listenerPausedUntil = now + Self.exhaustionPause
                return
            }
            if connections.count >= limits.maxConnections, !evictOldestReader() {
                // Every slot is busy sending a response: refuse this one.
                HTTPConnection(id: 0, fd: fd, deadline: now).sendBestEffort(.serviceUnavailable)
                close(fd)
                continue
            }
            nextID += 1
            connections[nextID] = HTTPConnection(id: nextID, fd: fd, deadline: now + limits.requestTimeout)
        }
    }

    /// At capacity, the connection that has been sending its request the longest gives way to
    /// the new one, so idle or trickling clients cannot keep every slot.
    private func evictOldestReader() -> Bool {
        guard let oldest = connections.values.filter({ $0.phase == .reading }).min(by: { $0.id < $1.id }) else { return false }
        oldest.sendBestEffort(.serviceUnavailable)
        finish(oldest)
        return true
    }

    private func handle(_ connection: HTTPConnection, revents: Int16, now: MonotonicInstant) {
        if connection.phase == .rendering, revents & Int16(POLLHUP | POLLERR | POLLNVAL) != 0 {
            // The client is gone while its metrics are rendered (poll reports hang-ups even
            // when no events are asked for): drop it now, or the loop would wake for it again
            // and again until the render finished.
            finish(connection)
            return
        }
        let step: HTTPConnection.Step
        switch connection.phase {
        case .reading: step = connection.readRequest(limits: limits, now: now)
        case .writing: step = connection.write(now: now)
        case .draining: step = connection.drain()
        case .rendering: step = .wait
        }
        switch step {
        case .wait:
            if revents & Int16(POLLNVAL) != 0 { finish(connection) }
        case .close:
            finish(connection)
        case .render(let includeBody):
            let (id, mailbox, render) = (connection.id, mailbox, render)
            Task {
                let exposition = await render()
                mailbox.deliver(HTTPResponse.metrics(exposition).serialized(includeBody: includeBody), to: id)
            }
        }
    }

    private func expire(now: MonotonicInstant) {
        for connection in connections.values where connection.deadline <= now {
            if connection.phase == .reading { connection.sendBestEffort(.requestTimeout) }
            finish(connection)
        }
    }

    private func finish(_ connection: HTTPConnection) {
        close(connection.fd)
        connections.removeValue(forKey: connection.id)
    }
}
