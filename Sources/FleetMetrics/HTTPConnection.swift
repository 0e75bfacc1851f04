import Fleet
import FleetCore
import Glibc

/// One client connection of the metrics endpoint, owned by the poll loop's thread.
///
/// Lifecycle: `reading` the request head (bounded in size and time) → `rendering` (a task builds
/// the metrics; the loop does not poll the socket) → `writing` the response without blocking →
/// `draining`: our side is shut down and whatever the client still sends is read and dropped
/// for a moment, so closing does not reset the connection before the client has read the
/// response. Every phase has a deadline; the loop closes connections past theirs.
final class HTTPConnection {
    enum Phase: Equatable {
        case reading, rendering, writing, draining
    }

    /// What the loop must do after an I/O step.
    enum Step: Equatable {
        case wait
        case close
        /// The request asks for the metrics: render them, then `startWriting`.
        case render(includeBody: Bool)
    }

    let id: UInt64
    let fd: Int32
    private(set) var phase: Phase = .reading
    private(set) var deadline: MonotonicInstant
    private var received: [UInt8] = []
    private var outgoing: [UInt8] = []
    private var sent = 0
    private var drained = 0

    /// How long the client may keep the connection open after the response, sending data we drop.
    static let drainTime: Duration = .seconds(1)
    static let drainLimit = 64 * 1024

    init(id: UInt64, fd: Int32, deadline: MonotonicInstant) {
        self.id = id
        self.fd = fd
        self.deadline = deadline
    }

    var pollEvents: Int16 {
        switch phase {
        case .reading, .draining: Int16(POLLIN)
        case .writing: Int16(POLLOUT)
        case .rendering: 0
        }
    }

    // MARK: - Reading the request

    func readRequest(limits: MetricsEndpoint.Limits, now: MonotonicInstant) -> Step {
        var buffer = [UInt8](repeating: 0, count: 4096)
        let room = min(buffer.count, limits.maxRequestBytes + 1 - received.count)
        let count = recv(fd, &buffer, room, 0)
        if count == 0 { return .close }  // the client left before finishing its request
        if count < 0 { return errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR ? .wait : .close }
        let chunk = buffer[..<count]
        received.append(contentsOf: chunk)
        if received.count > limits.maxRequestBytes {
            respond(.headerFieldsTooLarge, includeBody: true, limits: limits, now: now)
            return .wait
        }
        // A head ends with a line feed: parse only when one arrived, not on every byte of a slow client.
        guard chunk.contains(UInt8(ascii: "\n")) else { return .wait }
        switch HTTPRequestHead.parse(received) {
        case .incomplete:
            return .wait
        case .invalid(let why):
            respond(.badRequest(why), includeBody: true, limits: limits, now: now)
            return .wait
        case .complete(let head):
            switch MetricsRoute.route(head) {
            case .respond(let response, let includeBody):
                respond(response, includeBody: includeBody, limits: limits, now: now)
                return .wait
            case .metrics(let includeBody):
                phase = .rendering
                deadline = now + limits.responseTimeout
                return .render(includeBody: includeBody)
            }
        }
    }

    private func respond(_ response: HTTPResponse, includeBody: Bool, limits: MetricsEndpoint.Limits, now: MonotonicInstant) {
        deadline = now + limits.responseTimeout
        startWriting(response.serialized(includeBody: includeBody))
    }

    /// Sends `bytes` once, without waiting (a 408 or 503 on the way out; lost if the client is not reading).
    func sendBestEffort(_ response: HTTPResponse) {
        let bytes = response.serialized(includeBody: true)
        _ = bytes.withUnsafeBytes { send(fd, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL) | Int32(MSG_DONTWAIT)) }
    }

    // MARK: - Writing the response

    func startWriting(_ bytes: [UInt8]) {
        outgoing = bytes
        sent = 0
        phase = .writing
    }

    func write(now: MonotonicInstant) -> Step {
        while sent < outgoing.count {
            let count = outgoing.withUnsafeBytes { bytes in
                guard let base = bytes.baseAddress else { return 0 }  // not reached: sent < count
                return send(fd, base + sent, bytes.count - sent, Int32(MSG_NOSIGNAL))
            }
            if count < 0 { return errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR ? .wait : .close }
            sent += count
        }
        outgoing = []
        // Half-close: the client sees the end of the response; its own late bytes are drained.
        shutdown(fd, Int32(SHUT_WR))
        phase = .draining
        deadline = min(deadline, now + Self.drainTime)
        return .wait
    }

    func drain() -> Step {
        var buffer = [UInt8](repeating: 0, count: 4096)
        let count = recv(fd, &buffer, buffer.count, 0)
        if count == 0 { return .close }
        if count < 0 { return errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR ? .wait : .close }
        drained += count
        return drained > Self.drainLimit ? .close : .wait
    }
}
