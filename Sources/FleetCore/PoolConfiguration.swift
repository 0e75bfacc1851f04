// Everything the operator can tune about who is connected, in one value so that a reload swaps it
// atomically and tests can build it in one line.

/// The fleet-level connection policy as configured.
///
/// `maxConnections` bounds the total number of links the daemon holds (connected plus attempts in
/// flight). Pinned devices always count against it but are never refused because of it: if the
/// pinned set alone exceeds it, every pinned device is still wanted and the pool gets no room.
/// The pool fills what remains. Per-adapter slots are a hard limit for everyone, pinned included.
public struct PoolConfiguration: Hashable, Sendable {
    public var maxConnections: Int
    /// Connection slots of an adapter without an override; most controllers handle 5 LE links well.
    public var defaultSlotsPerAdapter: Int
    public var slotOverrides: [AdapterID: Int]
    /// A connected pool device is never displaced by another pool device before it has been
    /// connected this long.
    public var minimumDwell: Duration
    /// A pool candidate displaces a connected pool device only if its score is higher by more
    /// than this.
    public var scoreMargin: Double
    public var weights: PoolScoreWeights
    public var attemptRateLimit: AttemptRateLimit

    public init(
        maxConnections: Int,
        defaultSlotsPerAdapter: Int = 5,
        slotOverrides: [AdapterID: Int] = [:],
        minimumDwell: Duration = .seconds(60),
        scoreMargin: Double = 10,
        weights: PoolScoreWeights = PoolScoreWeights(),
        attemptRateLimit: AttemptRateLimit = .default
    ) {
        self.maxConnections = max(0, maxConnections)
        self.defaultSlotsPerAdapter = max(0, defaultSlotsPerAdapter)
        self.slotOverrides = slotOverrides
        self.minimumDwell = minimumDwell
        self.scoreMargin = max(0, scoreMargin)
        self.weights = weights
        self.attemptRateLimit = attemptRateLimit
    }

    /// The connection slots of `adapter`, never negative.
    public func slots(for adapter: AdapterID) -> Int {
        max(0, slotOverrides[adapter] ?? defaultSlotsPerAdapter)
    }
}
