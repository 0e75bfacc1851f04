import CMosquitto
import DetachedThread
import Fleet
import FleetCore
import Glibc
import Logging
import Synchronization

/// A connection to an MQTT broker through libmosquitto, kept up for as long as the client runs.
///
/// One thread of its own (`mqtt`) owns the libmosquitto handle: it connects, runs a `poll()` over
/// the broker's socket and an eventfd, reads, writes, keeps alive, and reconnects with jittered
/// exponential backoff (`MQTTReconnectSchedule`). No other thread calls libmosquitto, so none of
/// its locking is relied on.
///
/// `publish` never waits: it puts the message in a bounded `MQTTOutbox` under a lock and wakes the
/// thread. While the broker is away (or its socket is full) messages wait there — retained ones
/// latest per topic, the rest up to `capacity`, the oldest dropped and counted — and on every
/// accepted connection everything retained is published again. What arrives from the broker on
/// the subscribed topics, and each connect and loss, comes out of `events`.
///
/// `stop(final:)` publishes `final` (the gateway's `offline`), sends DISCONNECT so the broker
/// does not publish the Will, and ends the thread.
public final class MQTTClient: Sendable {
    public enum Event: Sendable, Equatable {
        /// The broker accepted the connection; subscriptions are sent.
        case connected
        /// An attempt failed or the connection was lost (with why); the next attempt is scheduled.
        case disconnected(String)
        case message(topic: String, payload: [UInt8])
    }

    public let counters: MQTTClientCounters
    /// How long a value may wait for the thread while values keep coming: one wake-up, one cork
    /// and a few TCP segments hand over all of them (at 5,000 values/s, 100 wake-ups instead of
    /// 5,000), the batching a C publisher pacing in 10 ms batches gets. Values that come alone
    /// wake the thread at once. 10 ms is within one BLE connection interval (wearables use
    /// 30–50 ms and more): no subscriber sees a value later than the radio already made it.
    static let valueLinger: Duration = .milliseconds(10)
    public let events: AsyncStream<Event>
    let shared: Mutex<MQTTLoopShared>
    let wakeFD: Int32
    private let finished = Mutex<FinishState>(FinishState())
    /// Told of each broker message dropped because `events` was full (see `onDroppedMessage`).
    private let droppedMessageHandler = Mutex<(@Sendable (_ topic: String, _ payload: [UInt8]) -> Void)?>(nil)

    /// - Parameters:
    ///   - capacity: non-retained messages kept while the broker is away (and as many values
    ///     waiting to be rendered, `publishValue`).
    ///   - random: the backoff's jitter source.
    ///   - values: how values given to `publishValue` become messages (on the client's thread).
    init(
        settings: MQTTConnectionSettings, capacity: Int = 10_000, schedule: MQTTReconnectSchedule = MQTTReconnectSchedule(),
        clock: any MonotonicClock = SystemMonotonicClock(), random: SeededRandom, counters: MQTTClientCounters = MQTTClientCounters(),
        values: MQTTValueRoute?, logger: Logger
    ) throws(MQTTClientError) {
        self.counters = counters
        let fd = eventfd(0, Int32(EFD_CLOEXEC | EFD_NONBLOCK))
        guard fd >= 0 else { throw MQTTClientError(message: "eventfd failed: errno \(errno)") }
        wakeFD = fd
        shared = Mutex(MQTTLoopShared(outbox: MQTTOutbox(capacity: capacity), values: MQTTValueQueue(capacity: capacity)))
        let (events, continuation) = AsyncStream<Event>.makeStream(bufferingPolicy: .bufferingNewest(1024))
        self.events = events
        let context = MQTTLoopContext(
            settings: settings, schedule: schedule, clock: clock, random: random, logger: logger, client: self,
            events: continuation, values: values)
        do {
            try DetachedThread.start(name: "mqtt") { MosquittoLoop(context).run() }
        } catch {
            Glibc.close(fd)
            throw MQTTClientError(message: "\(error)")
        }
    }

    /// - Parameters:
    ///   - capacity: non-retained messages kept while the broker is away.
    ///   - random: the backoff's jitter source.
    public convenience init(
        settings: MQTTConnectionSettings, capacity: Int = 10_000, schedule: MQTTReconnectSchedule = MQTTReconnectSchedule(),
        clock: any MonotonicClock = SystemMonotonicClock(), random: SeededRandom, counters: MQTTClientCounters = MQTTClientCounters(),
        logger: Logger
    ) throws(MQTTClientError) {
        try self.init(
            settings: settings, capacity: capacity, schedule: schedule, clock: clock, random: random, counters: counters, values: nil,
            logger: logger)
    }

    deinit {
        Glibc.close(wakeFD)
    }

    /// Queues a value for the broker, rendered on the client's thread by the `values` route it
    /// was made with (QoS 0, not retained); never waits. Called inline on the ingest thread: a
    /// lock and an append, and an eventfd write only when the thread sleeps without lingering.
    /// When `capacity` values wait (the broker is away or slow), the oldest is dropped and counted.
    func publishValue(_ value: ValuePipeline.Value) {
        let (wake, dropped) = shared.withLock { state -> (Bool, Bool) in
            let dropped = state.values.append(value)
            return (state.sleeping && state.connected && !state.lingering, dropped)
        }
        if dropped { counters.addDropped(1) }
        if wake { self.wake() }
    }

    /// Queues `message` for the broker; never waits.
    public func publish(_ message: MQTTMessage) {
        // A value (QoS 0, not retained) does not wake a lingering thread: it wakes by itself
        // within `valueLinger`, with whatever else arrived meanwhile.
        let urgent = message.retain || message.qos > 0
        let (wake, dropped) = shared.withLock { state -> (Bool, Bool) in
            let dropped = state.outbox.enqueue(message)
            return (state.sleeping && state.connected && (urgent || !state.lingering), dropped)
        }
        if dropped { counters.addDropped(1) }
        if wake { self.wake() }
    }

    /// `handler` is called (on the client's thread) with each message from the broker that
    /// `events` had no room for (1,024 wait unread): the oldest is dropped, counted and logged,
    /// and the handler may still answer it (a command's error result).
    public func onDroppedMessage(_ handler: @escaping @Sendable (_ topic: String, _ payload: [UInt8]) -> Void) {
        droppedMessageHandler.withLock { $0 = handler }
    }

    func messageDropped(topic: String, payload: [UInt8]) {
        droppedMessageHandler.withLock { $0 }?(topic, payload)
    }

    /// Forgets the retained messages of `topics` (another gateway publishes them now): nothing is
    /// published, and a reconnect does not send this client's old copies again.
    public func forgetRetained(_ topics: [String]) {
        shared.withLock { $0.outbox.forgetRetained(topics) }
    }

    /// The retained message on `topic` this client would publish again on a reconnect (nil for
    /// none, or a deletion): what a replaced connection hands to the next one.
    public func retainedMessage(_ topic: String) -> MQTTMessage? {
        shared.withLock { $0.outbox.retained[topic] }.flatMap { $0.payload.isEmpty ? nil : $0 }
    }

    /// Queues every retained message under `prefix` again (Home Assistant came back online).
    public func republishRetained(under prefix: String) {
        let wake = shared.withLock { state -> Bool in
            state.outbox.requeueRetained(under: prefix)
            return state.sleeping && state.connected
        }
        if wake { self.wake() }
    }

    /// Messages waiting for the broker.
    public var waiting: Int { shared.withLock { $0.outbox.waitingCount + $0.values.count + $0.handingOver } }

    /// Sends what waits and waits for the broker to acknowledge it, publishes `final` if
    /// connected, disconnects cleanly (at most 7 s in all; unacknowledged by then, the socket is
    /// closed without DISCONNECT so the Will stands for `final`) and ends the thread. Returns
    /// once the thread has ended (true), or after `timeout` (false: a connect under way to an
    /// unreachable host can hold the thread for as long as the kernel's TCP timeout; the process
    /// need not wait for it, but a new client with the same client id must: `threadEnded`).
    /// A thread still closing a connection at `timeout` is given up to `closingGrace` more: the
    /// stop waits for a clean close, but not the full 10 s for a connect that hangs (the daemon's
    /// own stop must fit in systemd's `TimeoutStopSec` with the fleet's).
    @discardableResult
    public func stop(final: MQTTMessage?, timeout: Duration = .seconds(5), closingGrace: Duration = .seconds(4)) async -> Bool {
        shared.withLock { state in
            state.stopRequested = true
            state.finalMessage = final
        }
        wake()
        if await threadEnded(within: timeout) { return true }
        guard shared.withLock({ $0.closing }) else { return false }
        return await threadEnded(within: closingGrace)
    }

    /// Whether the thread ended within `timeout`. Not a task group racing `threadEnded()`
    /// against a sleep: a group waits for every child before it returns, and `threadEnded()`
    /// does not end when cancelled — the timeout never took effect, and a stop during a connect
    /// that hangs waited for the kernel's TCP timeout (about two minutes), past systemd's
    /// `TimeoutStopSec`.
    private func threadEnded(within timeout: Duration) async -> Bool {
        await withCheckedContinuation { (continuation: CheckedContinuation<Bool, Never>) in
            let answer = AnswerOnce(continuation)
            let ended = finished.withLock { state -> Bool in
                if !state.ended { state.waiters.append { answer.resume(true) } }
                return state.ended
            }
            if ended {
                answer.resume(true)
                return
            }
            Task {
                try? await Task.sleep(for: timeout)
                answer.resume(false)
            }
        }
    }

    func wake() {
        var one: UInt64 = 1
        _ = Glibc.write(wakeFD, &one, 8)
    }

    // MARK: - Thread end

    private struct FinishState {
        var ended = false
        var waiters: [@Sendable () -> Void] = []
    }

    /// A continuation resumed by the first of several answers (the thread's end, a timeout).
    private final class AnswerOnce: Sendable {
        private let continuation: Mutex<CheckedContinuation<Bool, Never>?>

        init(_ continuation: CheckedContinuation<Bool, Never>) { self.continuation = Mutex(continuation) }

        func resume(_ value: Bool) {
            continuation.withLock { pending in
                defer { pending = nil }
                return pending
            }?.resume(returning: value)
        }
    }

    /// Whether the loop thread has ended.
    var threadHasEnded: Bool { finished.withLock { $0.ended } }

    /// Called by the loop thread as its last act.
    func loopEnded() {
        let waiters = finished.withLock { state in
            state.ended = true
            defer { state.waiters.removeAll() }
            return state.waiters
        }
        for waiter in waiters { waiter() }
    }

    /// Returns once the loop thread has ended.
    public func threadEnded() async {
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            let ended = finished.withLock { state -> Bool in
                if !state.ended { state.waiters.append { continuation.resume() } }
                return state.ended
            }
            if ended { continuation.resume() }
        }
    }
}

public struct MQTTClientError: Error, CustomStringConvertible {
    public let message: String
    public var description: String { message }
}

/// What the publishing side and the loop thread share, behind the client's lock.
struct MQTTLoopShared: Sendable {
    var outbox: MQTTOutbox
    /// Values not yet rendered (`publishValue`), oldest first, bounded like the outbox's.
    var values: MQTTValueQueue<ValuePipeline.Value>
    /// Messages or values the loop thread has taken and not yet handed to libmosquitto (or put
    /// back): still waiting, for `waiting`.
    var handingOver = 0
    var stopRequested = false
    var finalMessage: MQTTMessage?
    /// Set by the loop once it is closing a connection cleanly (draining, DISCONNECT): `stop`
    /// waits for that, up to its `closingGrace`.
    var closing = false
    /// Set while the loop sleeps in poll(): a publisher then writes the eventfd, if the loop is
    /// `connected` (without a connection there is nothing to hand the message to: it waits).
    var sleeping = false
    var connected = false
    /// Set while the loop sleeps for at most `valueLinger` after handing values over: values
    /// keep coming, so the next ones wait for that wake-up instead of causing one each.
    var lingering = false
}

/// Everything the loop thread starts with.
struct MQTTLoopContext: Sendable {
    let settings: MQTTConnectionSettings
    let schedule: MQTTReconnectSchedule
    let clock: any MonotonicClock
    let random: SeededRandom
    let logger: Logger
    let client: MQTTClient
    let events: AsyncStream<MQTTClient.Event>.Continuation
    let values: MQTTValueRoute?
}
