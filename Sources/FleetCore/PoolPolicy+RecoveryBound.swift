// The promise behind "100 simultaneous link losses never turn into a connect storm, and still
// recover in bounded time", as formulas over the policy's own parameters.

extension PoolPolicy {
    /// An upper bound on the time from a simultaneous loss of every link until every device is
    /// connected again, when every attempt succeeds and takes `connectLatency` (connect plus
    /// service resolution, the span an attempt holds its adapter), every device asks again at
    /// most `firstRetryDelay` after the loss, and the runtime evaluates at every event instant
    /// (attempt finished, retry due, `nextGrantInstant`).
    ///
    /// `T ≤ r + k·L + max(0, N − B)·I`, where `N = devices`, `r = firstRetryDelay`,
    /// `L = connectLatency`, `B`/`I` the token bucket's burst and refill interval, and
    /// `k = min(N, slotsPerAdapter)` the most attempts one adapter can have to serve (each
    /// adapter takes at most its slots; with `N = adapters × slots` that is exactly `N / adapters`).
    ///
    /// Derivation: after `r`, an adapter with work left is either running an attempt (at most
    /// `k·L` in total) or idle for want of a token. The gate is work-conserving, so while any
    /// adapter idles for a token, every token that arrives is spent at once; tokens arrive at
    /// most `I` apart once the bucket runs dry, and only `N − B` attempts need a token beyond the
    /// initial burst, so the token-starved time is at most `(N − B)·I`.
    ///
    /// Precondition: `devices ≤ adapters × slotsPerAdapter` (otherwise some never get a slot);
    /// returns nil when it does not hold or an argument is not positive.
    public static func recoveryBound(
        devices: Int,
        adapters: Int,
        slotsPerAdapter: Int,
        connectLatency: Duration,
        firstRetryDelay: Duration,
        rateLimit: AttemptRateLimit
    ) -> Duration? {
        guard devices > 0, adapters > 0, slotsPerAdapter > 0,
              devices <= adapters * slotsPerAdapter
        else { return nil }
        let perAdapter = min(devices, slotsPerAdapter)
        let starved = max(0, devices - rateLimit.burst)
        return firstRetryDelay + connectLatency * perAdapter + rateLimit.refillInterval * starved
    }

    /// A lower bound on the same recovery time under the same assumptions: no schedule can beat
    /// the busiest adapter serving `⌈N / adapters⌉` attempts one after another, nor the token
    /// bucket releasing the last attempt `(N − B)·I` after the first, plus its latency.
    ///
    /// `T ≥ r + max(⌈N / A⌉·L, max(0, N − B)·I + L)`.
    public static func recoveryLowerBound(
        devices: Int,
        adapters: Int,
        connectLatency: Duration,
        firstRetryDelay: Duration,
        rateLimit: AttemptRateLimit
    ) -> Duration? {
        guard devices > 0, adapters > 0 else { return nil }
        let busiest = (devices + adapters - 1) / adapters
        let serial = connectLatency * busiest
        let paced = rateLimit.refillInterval * max(0, devices - rateLimit.burst) + connectLatency
        return firstRetryDelay + max(serial, paced)
    }
}
