// FleetCore never reads a clock: the runtime passes "now" into every decision. Tests drive a
// simulated clock through the same type, so timing behaviour is exactly reproducible.

/// A point on a monotonic clock, in nanoseconds since an origin the runtime chooses
/// (the daemon uses CLOCK_MONOTONIC; tests usually start at zero).
public struct MonotonicInstant: Hashable, Comparable, Sendable, CustomStringConvertible {
    public var nanoseconds: Int64

    public init(nanoseconds: Int64) { self.nanoseconds = nanoseconds }

    public static let zero = MonotonicInstant(nanoseconds: 0)

    public func advanced(by duration: Duration) -> MonotonicInstant {
        MonotonicInstant(nanoseconds: nanoseconds &+ duration.nanosecondsClamped)
    }

    /// `self - earlier`, as a Duration (negative when `earlier` is later).
    public func duration(since earlier: MonotonicInstant) -> Duration {
        .nanoseconds(nanoseconds &- earlier.nanoseconds)
    }

    public static func + (lhs: MonotonicInstant, rhs: Duration) -> MonotonicInstant { lhs.advanced(by: rhs) }

    public static func < (lhs: MonotonicInstant, rhs: MonotonicInstant) -> Bool { lhs.nanoseconds < rhs.nanoseconds }

    public var description: String { "t+\(Double(nanoseconds) / 1e9)s" }
}

extension Duration {
    /// The duration in whole nanoseconds, saturating at `Int64`'s range (about 292 years).
    public var nanosecondsClamped: Int64 {
        let (seconds, attoseconds) = components
        let (scaled, overflow) = seconds.multipliedReportingOverflow(by: 1_000_000_000)
        if overflow { return seconds < 0 ? .min : .max }
        let (sum, overflow2) = scaled.addingReportingOverflow(attoseconds / 1_000_000_000)
        if overflow2 { return seconds < 0 ? .min : .max }
        return sum
    }

    /// The duration in seconds as a Double, for logs and metrics.
    public var secondsDouble: Double {
        let (seconds, attoseconds) = components
        return Double(seconds) + Double(attoseconds) / 1e18
    }
}
