// Defaults are chosen for a room of wearables on one gateway: links drop often and briefly
// (a wrist turns, a person walks past the antenna), connection slots are scarce, and a firmware
// that lacks a service will keep lacking it until someone updates it.

/// The tunable numbers of `ReconnectController`.
///
/// Every delay the controller produces lies in `[baseDelay, maxDelay]`, except
/// `fastFirstRetryDelay`, which is used only for the first transient link loss of a connection
/// that had been ready. `init` clamps inconsistent values (a cap below the base, a multiplier
/// below 1, a jitter fraction outside 0...1) instead of trapping, so a bad config cannot crash the
/// daemon; config validation should still reject them with a message.
public struct ReconnectPolicy: Hashable, Sendable {
    /// Lower bound of every backoff delay. 1 s: long enough not to hammer a controller that just
    /// refused, short enough that a brief dropout costs little.
    public var baseDelay: Duration
    /// Upper bound of every backoff delay. 60 s: a device out of range for long is retried about
    /// once a minute, which keeps scan and connect load on a busy adapter low.
    public var maxDelay: Duration
    /// Growth per consecutive failure. 2: the classic doubling, reaching the cap after ~6 failures.
    public var multiplier: Double
    /// "Equal jitter": the delay for attempt n is drawn uniformly from
    /// `[max(base, d·(1 − jitterFraction)), d]` with `d = min(cap, base·multiplier^(n−1))`.
    /// 0.5 spreads a fleet that dropped at once (adapter reset) over half the nominal delay,
    /// while keeping the expected delay growing and every delay within `[base, cap]`.
    public var jitterFraction: Double
    /// Delay for the first retry after a ready connection is lost to a transient cause. 250 ms:
    /// most wearable dropouts heal immediately and the device is still advertising.
    public var fastFirstRetryDelay: Duration
    /// How long a connection must stay ready before failure counts, budgets and the backoff
    /// exponent start from scratch. 60 s: shorter sessions count as flapping.
    public var stablePeriod: Duration
    /// Failures allowed per class (since the last stable connection) before the controller stops
    /// retrying; `nil` means unlimited. See `ReconnectPolicy.defaultBudgets`.
    public var budgets: [FailureClass: Int]
    /// Classes whose exhausted budget means "give up until an operator acts" (re-requests the
    /// device) rather than "suspend for `budgetCooldown`". Default: `.denied` (pairing is needed)
    /// and `.pairing`.
    public var giveUpClasses: Set<FailureClass>
    /// How long a device with an exhausted (non-give-up) budget rests before its budget is
    /// refilled. 5 min.
    public var budgetCooldown: Duration
    /// Consecutive protocol failures (with no ready connection between them) that open the
    /// circuit breaker. 3: one bad handshake can be a glitch; three in a row is the firmware.
    public var breakerThreshold: Int
    /// How long the breaker stays open before allowing one probe. 60 s.
    public var breakerCooldown: Duration
    /// Each failed probe multiplies the cooldown by this. 2.
    public var breakerCooldownMultiplier: Double
    /// The longest breaker cooldown. 30 min.
    public var breakerMaxCooldown: Duration

    /// Budgets per class, and why:
    /// - `transient` 12: radio loss heals; 12 failures spans ~8 min with the default delays.
    /// - `outOfSlots`, `bluetoothOff`, `notReady`: unlimited. They are about the gateway, not the
    ///   device: slots free up when other devices disconnect, and adapters come back.
    /// - `busy` 20: another operation is running; it ends on its own.
    /// - `gone` 6: each retry rediscovers first; after that, wait for the device to reappear.
    /// - `protocol`: unlimited, because the circuit breaker governs it.
    /// - `denied` 2: needs pairing or permissions; retrying will not help.
    /// - `pairing` 2: a timed-out or cancelled bonding may succeed next time, a third failure
    ///   waits for an operator (a wrong key or a refusal does at once: `PairingFailure`).
    /// - `unknown` 6.
    public static let defaultBudgets: [FailureClass: Int] = [
        .transient: 12, .busy: 20, .gone: 6, .denied: 2, .pairing: 2, .unknown: 6,
    ]

    public init(
        baseDelay: Duration = .seconds(1),
        maxDelay: Duration = .seconds(60),
        multiplier: Double = 2,
        jitterFraction: Double = 0.5,
        fastFirstRetryDelay: Duration = .milliseconds(250),
        stablePeriod: Duration = .seconds(60),
        budgets: [FailureClass: Int] = ReconnectPolicy.defaultBudgets,
        giveUpClasses: Set<FailureClass> = [.denied, .pairing],
        budgetCooldown: Duration = .seconds(300),
        breakerThreshold: Int = 3,
        breakerCooldown: Duration = .seconds(60),
        breakerCooldownMultiplier: Double = 2,
        breakerMaxCooldown: Duration = .seconds(1800)
    ) {
        let base = max(baseDelay, .nanoseconds(1))
        self.baseDelay = base
        self.maxDelay = max(maxDelay, base)
        self.multiplier = multiplier.isFinite ? max(multiplier, 1) : 1
        self.jitterFraction = jitterFraction.isFinite ? min(max(jitterFraction, 0), 1) : 0
        self.fastFirstRetryDelay = max(fastFirstRetryDelay, .zero)
        self.stablePeriod = max(stablePeriod, .zero)
        self.budgets = budgets.mapValues { max($0, 0) }
        self.giveUpClasses = giveUpClasses
        self.budgetCooldown = max(budgetCooldown, base)
        self.breakerThreshold = max(breakerThreshold, 1)
        let cooldown = max(breakerCooldown, base)
        self.breakerCooldown = cooldown
        self.breakerCooldownMultiplier = breakerCooldownMultiplier.isFinite ? max(breakerCooldownMultiplier, 1) : 1
        self.breakerMaxCooldown = max(breakerMaxCooldown, cooldown)
    }
}
