// Connection attempts are expensive for the controller and for bluetoothd: a fleet that loses its
// links at once must not turn into a connect storm, so attempts are paced fleet-wide.

/// The fleet-wide rate limit on connection attempts, as a token bucket.
///
/// At most `burst` attempts may start back to back; after that one more may start every
/// `refillInterval`. Over any window of length `w`, at most `burst + floor(w / refillInterval)`
/// attempts are granted.
public struct AttemptRateLimit: Hashable, Sendable {
    /// Tokens the bucket holds when full; at least 1.
    public var burst: Int
    /// Time to earn one token back; strictly positive.
    public var refillInterval: Duration

    /// Values out of range are clamped (burst to at least 1, interval to at least 1 ns), so a bad
    /// configuration degrades to a strict limit rather than to no limit at all.
    public init(burst: Int, refillInterval: Duration) {
        self.burst = max(1, burst)
        self.refillInterval = max(.nanoseconds(1), refillInterval)
    }

    /// Four back to back, then four per second.
    public static let `default` = AttemptRateLimit(burst: 4, refillInterval: .milliseconds(250))
}
