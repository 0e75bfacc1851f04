/// The class of service of an outgoing write. Inside one device, classes are served in this
/// order (control first), with an anti-starvation rule so bulk still moves under steady control
/// and normal traffic (see `OutgoingConfiguration.starvationLimit`).
public enum OutgoingQoS: Int, Hashable, Sendable, CaseIterable, Comparable, CustomStringConvertible {
    /// Commands and acknowledgements: small, rare, latency-sensitive, never coalesced.
    case control = 0
    /// Ordinary application writes.
    case normal = 1
    /// Large transfers (firmware chunks, logs) that may wait.
    case bulk = 2

    public static func < (lhs: OutgoingQoS, rhs: OutgoingQoS) -> Bool { lhs.rawValue < rhs.rawValue }

    public var description: String {
        switch self {
        case .control: "control"
        case .normal: "normal"
        case .bulk: "bulk"
        }
    }
}
