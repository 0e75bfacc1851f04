// One device's retry memory. The device state machine owns one and asks it, after every failure,
// when (and whether) to try again; the fleet gate still decides whether an attempt may start.

/// Decides when a device may be retried after a failure: a fast first retry for a dropped link,
/// jittered exponential backoff, per-class failure budgets, and a circuit breaker for protocol
/// failures.
///
/// A value type with no I/O: the caller passes the time and the random source, so the same inputs
/// always give the same decisions. Guarantees: every `.retry` delay lies in
/// `[policy.baseDelay, policy.maxDelay]`, except the documented fast first retry
/// (`policy.fastFirstRetryDelay`); no `.retry` is ever due before an open breaker's cooldown ends.
public struct ReconnectController: Hashable, Sendable {
    public var policy: ReconnectPolicy
    /// Failures since the last stable connection; the backoff exponent.
    public private(set) var consecutiveFailures: Int = 0
    /// Failures per class since the last stable connection (or since the class's budget was
    /// refilled).
    public private(set) var failuresByClass: [FailureClass: Int] = [:]
    public private(set) var breaker: Breaker = .closed
    /// Protocol failures with no ready connection between them.
    public private(set) var protocolStreak: Int = 0
    /// When the current connection became ready; nil when not ready.
    public private(set) var readySince: MonotonicInstant?
    private var nextBreakerCooldown: Duration

    public init(policy: ReconnectPolicy = ReconnectPolicy()) {
        self.policy = policy
        self.nextBreakerCooldown = policy.breakerCooldown
    }

    /// Whether a connection attempt may start now as far as the breaker is concerned.
    public func mayAttempt(now: MonotonicInstant) -> Bool {
        switch breaker {
        case .closed, .halfOpen: true
        case .open(let until): now >= until
        }
    }

    /// The connection reached ready: the protocol works, so the breaker closes and the protocol
    /// streak ends. Budgets reset only once the connection has stayed up for `stablePeriod`
    /// (checked at the next failure, or by `connectionEnded(now:)`), so a flapping device still
    /// runs out of budget.
    public mutating func recordReady(now: MonotonicInstant) {
        readySince = now
        breaker = .closed
        protocolStreak = 0
        nextBreakerCooldown = policy.breakerCooldown
    }

    /// The breaker's cooldown has elapsed and the owner is about to probe: move to half-open.
    /// Returns false (and changes nothing) while the breaker is still open at `now`.
    @discardableResult
    public mutating func beginProbe(now: MonotonicInstant) -> Bool {
        guard case .open(let until) = breaker else { return true }
        guard now >= until else { return false }
        breaker = .halfOpen
        return true
    }

    /// Forgets every failure: the owner was asked for the device again after giving up.
    public mutating func reset() {
        consecutiveFailures = 0
        failuresByClass = [:]
        breaker = .closed
        protocolStreak = 0
        readySince = nil
        nextBreakerCooldown = policy.breakerCooldown
    }

    /// Records a failure of `failureClass` at `now` and decides what to do next.
    public mutating func recordFailure(
        _ failureClass: FailureClass,
        now: MonotonicInstant,
        random: inout some RandomNumberGenerator
    ) -> ReconnectDecision {
        let endedReadyConnection = readySince != nil
        if let since = readySince, now.duration(since: since) >= policy.stablePeriod {
            consecutiveFailures = 0
            failuresByClass = [:]
        }
        readySince = nil
        let isFirstSinceStable = consecutiveFailures == 0
        consecutiveFailures += 1
        failuresByClass[failureClass, default: 0] += 1

        if failureClass == .protocol, let decision = recordProtocolFailure(now: now) {
            return decision
        }
        if let budget = policy.budgets[failureClass], failuresByClass[failureClass, default: 0] > budget {
            if policy.giveUpClasses.contains(failureClass) { return .giveUp(failureClass) }
            // The refill happens now so that the first attempt after the cooldown has a budget.
            failuresByClass[failureClass] = 0
            return .suspend(until: now + policy.budgetCooldown, reason: .budgetExhausted(failureClass))
        }
        let delay: Duration
        if failureClass == .transient, endedReadyConnection, isFirstSinceStable {
            delay = policy.fastFirstRetryDelay
        } else {
            delay = backoffDelay(attempt: consecutiveFailures, random: &random)
        }
        let retryAt = now + delay
        if case .open(let until) = breaker, retryAt < until {
            // A failure of a link adopted while the breaker was open must not cut its cooldown short.
            return .suspend(until: until, reason: .circuitOpen)
        }
        return .retry(at: retryAt, attempt: consecutiveFailures, rediscover: failureClass == .gone)
    }

    private mutating func recordProtocolFailure(now: MonotonicInstant) -> ReconnectDecision? {
        protocolStreak += 1
        switch breaker {
        case .halfOpen:
            // The probe failed the same way: wait longer before the next one.
            nextBreakerCooldown = min(nextBreakerCooldown * policy.breakerCooldownMultiplier, policy.breakerMaxCooldown)
        case .closed, .open:
            guard protocolStreak >= policy.breakerThreshold else { return nil }
        }
        let until = now + nextBreakerCooldown
        breaker = .open(until: until)
        return .suspend(until: until, reason: .circuitOpen)
    }
}
