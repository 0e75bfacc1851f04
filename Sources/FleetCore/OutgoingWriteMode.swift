/// What the sender asks for; the scheduler resolves it to an `OutgoingWriteType` at enqueue time.
///
/// `automatic` follows one rule: `control` writes go with response when the characteristic allows
/// it (a command should be acknowledged), everything else goes without response when allowed
/// (throughput); either falls back to the other type when only that one is allowed.
public enum OutgoingWriteMode: Hashable, Sendable {
    case withResponse
    case withoutResponse
    case automatic

    /// The write type for `qos` on a characteristic with `properties`, or nil if it cannot be
    /// written that way.
    public func resolve(qos: OutgoingQoS, properties: OutgoingWriteProperties) -> OutgoingWriteType? {
        let acked = properties.contains(.write)
        let unacked = properties.contains(.writeWithoutResponse)
        switch self {
        case .withResponse: return acked ? .withResponse : nil
        case .withoutResponse: return unacked ? .withoutResponse : nil
        case .automatic:
            if qos == .control { return acked ? .withResponse : (unacked ? .withoutResponse : nil) }
            return unacked ? .withoutResponse : (acked ? .withResponse : nil)
        }
    }
}
