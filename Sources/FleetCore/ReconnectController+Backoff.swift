extension ReconnectController {
    /// The jittered delay before retry number `attempt` (1-based): "equal jitter" over
    /// `[max(base, d·(1 − jitterFraction)), d]`, `d = min(cap, base·multiplier^(attempt−1))`.
    /// Always within `[policy.baseDelay, policy.maxDelay]`.
    public func backoffDelay(attempt: Int, random: inout some RandomNumberGenerator) -> Duration {
        let base = policy.baseDelay.nanosecondsClamped
        let cap = policy.maxDelay.nanosecondsClamped
        // Grow in Double and clamp before converting back: base·2^64 would overflow Int64.
        let exponent = Double(max(attempt, 1) - 1)
        let nominal = Double(base) * power(policy.multiplier, exponent)
        let upper = nominal >= Double(cap) ? cap : max(base, Int64(nominal))
        let lower = max(base, upper - Int64(Double(upper) * policy.jitterFraction))
        guard lower < upper else { return .nanoseconds(upper) }
        return .nanoseconds(Int64.random(in: lower...upper, using: &random))
    }
}

/// `x^n` for a non-negative integral `n`, without Foundation: repeated squaring in Double,
/// saturating at infinity (which the caller clamps to the cap).
private func power(_ x: Double, _ n: Double) -> Double {
    var result = 1.0
    var factor = x
    var remaining = Int(min(n, 2048))
    while remaining > 0 {
        if remaining & 1 == 1 { result *= factor }
        factor *= factor
        remaining >>= 1
        if result.isInfinite { return result }
    }
    return result
}
