/// One fault to apply now: from the control interface, or from a scenario's schedule.
///
/// `device` is an address (`AA:BB:CC:DD:EE:FF`); nil means every device (fleet-wide). `adapter`
/// names an adapter (`hci0`) for adapter faults; nil means every adapter.
public struct FaultCommand: Codable, Sendable, Hashable {
    public enum Kind: String, Codable, Sendable, CaseIterable {
        /// `Connect` fails with `error` (default `le-connection-abort-by-local`) with `probability` (default 1).
        case connectFailure = "connect-failure"
        /// Links drop after exponentially distributed times with mean `seconds` (0 stops it).
        case linkLoss = "link-loss"
        /// The link drops now (reason Timeout), as if the device walked away for an instant.
        case dropLink = "drop-link"
        /// `seconds` more between Connected and ServicesResolved.
        case resolveDelay = "resolve-delay"
        /// `Device1.Disconnect` takes `seconds` (0 or none: at once) before the link goes and it
        /// answers, as with a busy controller or a peer that does not answer the termination.
        case disconnectDelay = "disconnect-delay"
        /// Service `uuid` is missing after resolution (empty uuid restores it).
        case missingService = "missing-service"
        /// The device stops advertising; a connected one loses its link (reason Timeout).
        case outOfRange = "out-of-range"
        /// The device advertises again.
        case inRange = "in-range"
        /// Adapter power off (`powered` false) or on.
        case adapterPower = "adapter-power"
        /// bluetoothd restarts: its name and every object vanish, and come back after `seconds`.
        case restart
        /// Clears every standing fault of the target.
        case clear
    }

    public var kind: Kind
    public var device: String?
    public var adapter: String?
    public var error: String?
    public var probability: Double?
    public var seconds: Double?
    public var uuid: String?
    public var powered: Bool?

    public init(
        _ kind: Kind, device: String? = nil, adapter: String? = nil, error: String? = nil, probability: Double? = nil,
        seconds: Double? = nil, uuid: String? = nil, powered: Bool? = nil
    ) {
        self.kind = kind
        self.device = device
        self.adapter = adapter
        self.error = error
        self.probability = probability
        self.seconds = seconds
        self.uuid = uuid
        self.powered = powered
    }
}
