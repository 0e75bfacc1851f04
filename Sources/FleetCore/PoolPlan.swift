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

// MARK: -

/// A link the runtime should close because the plan gives its slot to someone else.
public struct PoolEviction: Hashable, Sendable {
    public enum Reason: Hashable, Sendable {
        /// A pinned device needs the slot.
        case makeRoomForPinned
        /// Higher-ranked pool devices fill the pool (beaten by the margin, after the dwell time),
        /// or the pool shrank.
        case outranked
        /// The device is no longer eligible.
        case notEligible
        /// The adapter holds more links than its configured slots (the slots were lowered).
        case overCapacity
    }

    public var device: DeviceID
    public var adapter: AdapterID
    public var reason: Reason

    public init(device: DeviceID, adapter: AdapterID, reason: Reason) {
        self.device = device
        self.adapter = adapter
        self.reason = reason
    }
}

// MARK: -

/// Permission for one device to start one connection attempt on one adapter now.
///
/// The runtime hands it to the device (`attemptGranted(adapter:)`) and must report the end of the
/// attempt, however it ends, with `PoolPolicy.attemptFinished(device:)`: until then the adapter
/// counts the attempt as in flight.
public struct AttemptGrant: Hashable, Sendable {
    public var device: DeviceID
    public var adapter: AdapterID

    public init(device: DeviceID, adapter: AdapterID) {
        self.device = device
        self.adapter = adapter
    }
}

// MARK: -

/// Why a device that wants a connection attempt did not get one in this evaluation. Reported so
/// that logs and metrics can say what the fleet is waiting for.
public enum AttemptSuppression: Hashable, Sendable {
    case engineStopped
    case bluetoothdGone
    /// Every adapter that reaches the device is powered off.
    case adapterOff
    case notEligible
    case restoreInProgress
    /// No adapter sees the device or knows how to connect it.
    case unreachable
    /// The plan has no slot for it: pinned devices or higher-ranked pool devices fill them.
    case notSelected
    /// Its target adapter already has an attempt in flight.
    case adapterBusy(AdapterID)
    /// Its target adapter's slots are still held (for example by a device being evicted).
    case slotsHeld(AdapterID)
    /// Granting would exceed `maxConnections` (pool devices only).
    case maxConnections
    /// The fleet-wide token bucket is empty.
    case rateLimited
}
