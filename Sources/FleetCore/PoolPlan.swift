/// The pool policy's decision for one evaluation: who should be connected and where, which links
/// to close, and which attempts may start now.
///
/// Guarantees, for the adapters and devices it was computed from:
/// - `placements` never puts more devices on an adapter than its slots, never more pool devices
///   than `maxConnections` minus the placed pinned devices, and only on powered adapters that
///   reach the device;
/// - a reachable, eligible pinned device is left out only when every powered adapter reaching it
///   is full of pinned devices;
/// - `grants` start at most one attempt per adapter, none on an adapter that already has one in
///   flight, none beyond the adapter's free slots, and no more than the fleet token bucket allows.
public struct PoolPlan: Hashable, Sendable {
    /// Every device that should hold a link, with the adapter it should hold it on.
    public var placements: [DeviceID: AdapterID]
    /// Links to close, in device order.
    public var evictions: [PoolEviction]
    /// Attempts that may start now: pinned first, then the adapters with the longest backlog.
    public var grants: [AttemptGrant]
    /// Devices that want an attempt and did not get one, with the reason.
    public var suppressed: [DeviceID: AttemptSuppression]
    /// When the token bucket will next have a token, if an attempt was held back for lack of one:
    /// the runtime should evaluate again then rather than poll.
    public var nextGrantInstant: MonotonicInstant?

    public init(
        placements: [DeviceID: AdapterID] = [:],
        evictions: [PoolEviction] = [],
        grants: [AttemptGrant] = [],
        suppressed: [DeviceID: AttemptSuppression] = [:],
        nextGrantInstant: MonotonicInstant? = nil
    ) {
        self.placements = placements
        self.evictions = evictions
        self.grants = grants
        self.suppressed = suppressed
        self.nextGrantInstant = nextGrantInstant
    }

    public func isWanted(_ device: DeviceID) -> Bool { placements[device] != nil }
}
