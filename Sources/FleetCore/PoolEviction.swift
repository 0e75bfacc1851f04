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
