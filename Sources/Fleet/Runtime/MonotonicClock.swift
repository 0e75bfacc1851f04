import FleetCore
import Glibc
import Synchronization

/// The runtime's source of monotonic time: FleetCore decides with `MonotonicInstant`s, the
/// runtime reads them here and sleeps until them. Tests inject `ManualClock`.
public protocol MonotonicClock: Sendable {
    func now() -> MonotonicInstant
    /// Returns at or after `deadline`; throws `CancellationError` when the task is cancelled.
    func sleep(until deadline: MonotonicInstant) async throws
}

/// CLOCK_MONOTONIC: never jumps with wall-clock changes, which is what timeouts and backoff need.
public struct SystemMonotonicClock: MonotonicClock {
    public init() {}

    public func now() -> MonotonicInstant {
        var ts = timespec()
        clock_gettime(CLOCK_MONOTONIC, &ts)
        return MonotonicInstant(nanoseconds: Int64(ts.tv_sec) * 1_000_000_000 + Int64(ts.tv_nsec))
    }

    public func sleep(until deadline: MonotonicInstant) async throws {
        let remaining = deadline.duration(since: now())
        if remaining > .zero { try await Task.sleep(for: remaining) }
    }
}

// MARK: -

/// A clock that moves only when told to: timers in tests fire exactly when the test advances
/// time past them, never by waiting on real time.
public final class ManualClock: MonotonicClock {
    private struct Sleeper {
        let deadline: MonotonicInstant
        let continuation: CheckedContinuation<Void, any Error>
    }

    private struct State {
        var now: MonotonicInstant
        var sleepers: [UInt64: Sleeper] = [:]
        var nextID: UInt64 = 0
    }

    private let state: Mutex<State>

    public init(start: MonotonicInstant = .zero) {
        state = Mutex(State(now: start))
    }

    public func now() -> MonotonicInstant { state.withLock { $0.now } }

    /// How many tasks are sleeping on this clock (tests wait for a timer to be armed).
    public var sleeperCount: Int { state.withLock { $0.sleepers.count } }

    public func sleep(until deadline: MonotonicInstant) async throws {
        let id = state.withLock { state -> UInt64 in
            state.nextID += 1
            return state.nextID
        }
        try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Void, any Error>) in
                let resumeNow = state.withLock { state -> Bool in
                    if deadline <= state.now || Task.isCancelled { return true }
                    state.sleepers[id] = Sleeper(deadline: deadline, continuation: continuation)
                    return false
                }
                if resumeNow {
                    if Task.isCancelled {
                        continuation.resume(throwing: CancellationError())
                    } else {
                        continuation.resume()
                    }
                }
            }
        } onCancel: {
            let sleeper = state.withLock { $0.sleepers.removeValue(forKey: id) }
            sleeper?.continuation.resume(throwing: CancellationError())
        }
    }

    /// Moves time forward and wakes every sleeper whose deadline has passed, earliest first.
    public func advance(by duration: Duration) {
        let due = state.withLock { state -> [Sleeper] in
            state.now = state.now + duration
            let now = state.now
            let due = state.sleepers.filter { $0.value.deadline <= now }
            for id in due.keys { state.sleepers[id] = nil }
            return due.values.sorted { $0.deadline < $1.deadline }
        }
        for sleeper in due { sleeper.continuation.resume() }
    }
}
