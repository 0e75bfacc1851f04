// Tokens are earned in whole intervals measured from an anchor, not from the last call, so the
// rate does not depend on how often the runtime happens to evaluate.

/// The fleet-wide token bucket behind `AttemptRateLimit`; state only, time is always passed in.
///
/// While the bucket is full its anchor follows the clock, so after a quiet period the first token
/// spent comes back exactly one interval later.
public struct AttemptTokenBucket: Hashable, Sendable {
    public private(set) var limit: AttemptRateLimit
    public private(set) var tokens: Int
    private var anchor: MonotonicInstant

    /// Starts full.
    public init(limit: AttemptRateLimit, now: MonotonicInstant) {
        self.limit = limit
        self.tokens = limit.burst
        self.anchor = now
    }

    /// Credits the tokens earned up to `now`. A clock that goes backwards earns nothing.
    public mutating func refill(now: MonotonicInstant) {
        if tokens >= limit.burst {
            tokens = limit.burst
            anchor = max(anchor, now)
            return
        }
        let elapsed = now.nanoseconds &- anchor.nanoseconds
        guard elapsed > 0 else { return }
        let interval = max(1, limit.refillInterval.nanosecondsClamped)
        let earned = elapsed / interval
        guard earned > 0 else { return }
        let room = Int64(limit.burst - tokens)
        tokens += Int(min(earned, room))
        anchor = tokens >= limit.burst ? now : MonotonicInstant(nanoseconds: anchor.nanoseconds &+ earned &* interval)
    }

    /// Spends one token if there is one (after refilling up to `now`).
    public mutating func take(now: MonotonicInstant) -> Bool {
        refill(now: now)
        guard tokens > 0 else { return false }
        tokens -= 1
        return true
    }

    /// When the next token arrives, or nil while the bucket is full.
    public var nextRefillInstant: MonotonicInstant? {
        tokens >= limit.burst ? nil : anchor + limit.refillInterval
    }

    /// Applies a new limit (on reload) without handing out extra tokens.
    public mutating func reconfigure(_ newLimit: AttemptRateLimit, now: MonotonicInstant) {
        refill(now: now)
        limit = newLimit
        tokens = min(tokens, newLimit.burst)
        if tokens >= newLimit.burst { anchor = now }
    }
}
