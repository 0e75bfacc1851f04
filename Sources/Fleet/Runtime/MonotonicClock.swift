import FleetCore
import Glibc

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
