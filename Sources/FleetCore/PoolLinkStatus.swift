/// Where a device's link stands, as far as slot accounting is concerned. Both an attempt in
/// flight and an established link hold one slot of their adapter.
public enum PoolLinkStatus: Hashable, Sendable {
    case disconnected
    case attempting(AdapterID)
    case connected(AdapterID, since: MonotonicInstant)

    /// The adapter whose slot this link holds, if any.
    public var adapter: AdapterID? {
        switch self {
        case .disconnected: nil
        case .attempting(let adapter), .connected(let adapter, _): adapter
        }
    }

    public var isAttempting: Bool {
        if case .attempting = self { true } else { false }
    }
}
