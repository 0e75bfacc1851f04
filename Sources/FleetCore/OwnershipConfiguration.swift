// Defaults are chosen for a few gateways in neighbouring rooms on one site broker: messages take
// milliseconds (well under a second even through a loaded broker), a wearable walks from one
// room to the next in tens of seconds, and an RSSI reading of a still device wanders by a few dB.

/// The tunable numbers of `OwnershipMachine`.
///
/// The guarantees of the machine (see its documentation) hold when `settle` exceeds twice the
/// longest time a message takes from publisher to subscriber, and `lease` exceeds the longest
/// gap between two heartbeats of a live gateway as a peer hears them. `init` clamps inconsistent
/// values (a lease shorter than two renewals, a grace shorter than the lease) instead of
/// trapping; configuration validation should still reject them with a message.
public struct OwnershipConfiguration: Hashable, Sendable {
    /// How long a gateway that stops sending heartbeats still counts as the owner of its devices.
    /// 15 s: three heartbeats, so one lost heartbeat never hands a device over, and a dead
    /// gateway whose Last Will is late (the broker's keepalive) still loses its devices in seconds.
    public var lease: Duration
    /// A gateway's heartbeat period. 5 s: one message per gateway, whatever its number of devices.
    public var renewal: Duration
    /// How long a claim must stand, after it came back from the broker, before its gateway
    /// connects the device. 1 s: twice the slowest delivery a site broker should ever have, so
    /// that a concurrent greater claim is always seen before anyone connects.
    public var settle: Duration
    /// By how much another gateway's bid must beat the owner's before the owner considers handing
    /// the device over. 8 (dB-equivalent): more than twice `hysteresis` plus the wander of a
    /// smoothed RSSI, so noise alone never moves a device.
    public var margin: Double
    /// How long a better bid must keep beating the owner's by `margin` before the owner hands the
    /// device over. 30 s: someone passing between rooms does not move the link; someone who
    /// stays does.
    public var dwell: Duration
    /// After (re)connecting to the broker, how long a gateway collects heartbeats, bids and
    /// claims before it claims a device as unowned or lapsed. At least `lease`, or a peer not
    /// yet heard since the reconnection would look lapsed. Default `lease + renewal` (20 s):
    /// an owner that reconnects up to one renewal after us has re-published its claims by then
    /// (a restarted broker may have lost them).
    public var resyncGrace: Duration
    /// The shortest time between two bid messages of one gateway. 5 s: six chances within one
    /// `dwell` to show a better bid, and at most twelve messages a minute per gateway.
    public var bidInterval: Duration
    /// A bid is re-published only when some device's score moved by more than this since the
    /// last message (or a device was heard or lost). 3: above the wander of a still device's
    /// smoothed RSSI, and below half of `margin`, so the owner's view of a challenger is never
    /// off by a margin.
    public var hysteresis: Double
    public var scoring: OwnershipScoring
    /// Devices that should rather be connected by some gateways (the one in the same room, or
    /// the one with the spare adapter): a listed gateway adds `scoring.preferredBonus` to its
    /// bid. Configuration of each gateway; gateways need not agree on it.
    public var preferredGateways: [DeviceID: Set<GatewayID>]

    public init(
        lease: Duration = .seconds(15),
        renewal: Duration = .seconds(5),
        settle: Duration = .seconds(1),
        margin: Double = 8,
        dwell: Duration = .seconds(30),
        resyncGrace: Duration? = nil,
        bidInterval: Duration = .seconds(5),
        hysteresis: Double = 3,
        scoring: OwnershipScoring = OwnershipScoring(),
        preferredGateways: [DeviceID: Set<GatewayID>] = [:]
    ) {
        let renewal = max(renewal, .milliseconds(1))
        self.renewal = renewal
        self.lease = max(lease, renewal * 2)
        self.settle = max(settle, .zero)
        self.margin = max(margin.isFinite ? margin : 0, 0)
        self.dwell = max(dwell, .zero)
        self.resyncGrace = max(resyncGrace ?? self.lease + renewal, self.lease)
        self.bidInterval = max(bidInterval, .zero)
        self.hysteresis = max(hysteresis.isFinite ? hysteresis : 0, 0)
        self.scoring = scoring
        self.preferredGateways = preferredGateways
    }
}

/// What the fleet knows about one device it hears, for its bid: `OwnershipInput.heard`.
public struct OwnershipBidInputs: Hashable, Sendable, Codable {
    /// The latest RSSI reading, dBm: the best adapter's advertisement, or the link's RSSI while
    /// connected (a connected wearable usually stops advertising; without the link's reading
    /// the owner would stop bidding for the device it holds).
    public var rssi: Int
    /// Connection slots free on the adapters that hear the device, counting the slot this device
    /// holds here as free, so that holding a device does not lower the bid for it.
    public var freeSlots: Int
    /// Failed connection attempts to this device here, recently (the fleet's reconnect
    /// controller's count since the last stable link).
    public var recentFailures: Int

    public init(rssi: Int, freeSlots: Int, recentFailures: Int = 0) {
        self.rssi = rssi
        self.freeSlots = freeSlots
        self.recentFailures = recentFailures
    }
}

/// How a gateway scores its bid for a device, in dB-equivalents so that the margin and the
/// hysteresis speak of one quantity:
///
/// `score = smoothedRSSI + freeSlotWeight × min(freeSlots, freeSlotsCounted)
///          − failurePenalty × recentFailures + (preferred ? preferredBonus : 0)`
///
/// `smoothedRSSI` is an exponentially weighted moving average of the readings, so one lucky
/// advertisement does not win a device. Pure: the machine keeps the average, the fleet supplies
/// the readings.
public struct OwnershipScoring: Hashable, Sendable {
    /// Weight of the newest reading in the moving average. 0.25: about the last four readings
    /// count, which damps a still device's wander to a third of the raw noise.
    public var rssiSmoothing: Double
    /// dB-equivalent per free slot. 2: a gateway with room beats a nearly full one that hears
    /// the device a little better.
    public var freeSlotWeight: Double
    /// Free slots beyond this add nothing. 3: a gateway with room is as good as one with more
    /// room; only a nearly full one should lose devices for it.
    public var freeSlotsCounted: Int
    /// dB-equivalent per recent failure. 6: a gateway whose attempts keep failing (interference,
    /// a flaky adapter) yields to one that hears the device as well.
    public var failurePenalty: Double
    /// Added to the bid of a preferred gateway. 12: more than `margin`, so a preferred gateway
    /// that hears the device about as well as another takes it, but one that hears it more than
    /// 12 dB worse (several times farther away) does not.
    public var preferredBonus: Double

    public init(
        rssiSmoothing: Double = 0.25,
        freeSlotWeight: Double = 2,
        freeSlotsCounted: Int = 3,
        failurePenalty: Double = 6,
        preferredBonus: Double = 12
    ) {
        self.rssiSmoothing = rssiSmoothing.isFinite ? min(max(rssiSmoothing, 0.01), 1) : 1
        self.freeSlotWeight = freeSlotWeight
        self.freeSlotsCounted = max(freeSlotsCounted, 0)
        self.failurePenalty = failurePenalty
        self.preferredBonus = preferredBonus
    }

    /// The moving average after one more reading (the first reading starts it).
    public func smoothed(previous: Double?, reading: Int) -> Double {
        guard let previous else { return Double(reading) }
        return previous + rssiSmoothing * (Double(reading) - previous)
    }

    /// The bid, rounded to 0.1 so that what is published is exactly what every gateway compares.
    public func score(smoothedRSSI: Double, freeSlots: Int, recentFailures: Int, preferred: Bool) -> Double {
        let slots = Double(min(max(freeSlots, 0), freeSlotsCounted))
        let raw = smoothedRSSI + freeSlotWeight * slots - failurePenalty * Double(max(recentFailures, 0))
            + (preferred ? preferredBonus : 0)
        return (raw * 10).rounded() / 10
    }
}
