import FleetCore
import Synchronization

/// One thing the fleet did: a fleet event (state change, failure, attempt, write or read result,
/// what it learned, …) or a decoded value (with its raw bytes, device, characteristic and the
/// time it was received).
public enum FleetActivity: Sendable {
    case fleet(FleetEvent)
    case value(ValuePipeline.Value)
}

/// A consumer's feed of everything the fleet does, in the order each side produced it (fleet
/// events in the executor's order, each characteristic's values in arrival order).
///
/// Bounded: at most `limit` activities wait for the consumer; when it falls behind, the oldest
/// are dropped and counted in `dropped`, so a slow consumer never slows the fleet or the ingest
/// path (publishing is a lock and a non-blocking yield). It ends when its iteration ends or the
/// fleet stops. Nobody subscribed costs nothing: values are not even assembled then.
public final class FleetActivityFeed: AsyncSequence, Sendable {
    public typealias Element = FleetActivity
    private let stream: AsyncStream<FleetActivity>
    private let droppedCount = Atomic<Int>(0)

    init(limit: Int, register: (AsyncStream<FleetActivity>.Continuation, FleetActivityFeed) -> (@Sendable () -> Void)) {
        let (stream, continuation) = AsyncStream<FleetActivity>.makeStream(bufferingPolicy: .bufferingNewest(Swift.max(1, limit)))
        self.stream = stream
        let unregister = register(continuation, self)
        continuation.onTermination = { @Sendable (_: AsyncStream<FleetActivity>.Continuation.Termination) in unregister() }
    }

    /// Activities dropped because this consumer fell behind.
    public var dropped: Int { droppedCount.load(ordering: .relaxed) }

    func yield(_ activity: FleetActivity, to continuation: AsyncStream<FleetActivity>.Continuation) {
        if case .dropped = continuation.yield(activity) { droppedCount.add(1, ordering: .relaxed) }
    }

    public func makeAsyncIterator() -> AsyncStream<FleetActivity>.Iterator { stream.makeAsyncIterator() }
}

/// The executor's side of the feeds: the fleet events each feed gets.
final class FleetEventFeeds: Sendable {
    private struct Feeds {
        var next: UInt64 = 0
        var feeds: [UInt64: (FleetActivityFeed, AsyncStream<FleetActivity>.Continuation)] = [:]
        var finished = false
    }

    private let state = Mutex(Feeds())

    func add(_ feed: FleetActivityFeed, _ continuation: AsyncStream<FleetActivity>.Continuation) -> UInt64? {
        state.withLock { state in
            guard !state.finished else { return nil }
            state.next += 1
            state.feeds[state.next] = (feed, continuation)
            return state.next
        }
    }

    func remove(_ id: UInt64) {
        _ = state.withLock { $0.feeds.removeValue(forKey: id) }
    }

    func publish(_ event: FleetEvent) {
        let feeds = state.withLock { Array($0.feeds.values) }
        for (feed, continuation) in feeds { feed.yield(.fleet(event), to: continuation) }
    }

    /// Ends every feed (the fleet stopped).
    func finish() {
        let continuations = state.withLock { state in
            state.finished = true
            defer { state.feeds.removeAll() }
            return state.feeds.values.map(\.1)
        }
        for continuation in continuations { continuation.finish() }
    }
}
