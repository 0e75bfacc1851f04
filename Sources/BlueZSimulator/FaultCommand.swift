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
        /// The adapter's discovery stops hearing anything while `Discovering` stays true, as Linux
        /// 6.1 with bluetoothd 5.66 left a scan it had paused for an LE connection attempt: no
        /// InterfacesAdded, no RSSI updates (so temporary objects expire), SetDiscoveryFilter
        /// accepted without effect, until every client has stopped discovering (or it ended by
        /// power-off or a restart) and one starts it again. It stalls the discovery running now;
        /// on an adapter not discovering, the next discovery starts stalled. `adapter` nil:
        /// every adapter.
        case stallDiscovery = "stall-discovery"
        /// The device refuses write requests to characteristic `uuid` with ATT error `attError`
        /// (default 0xfc): after the write latency bluetoothd 5.66 answers as it words that code
        /// (`org.bluez.Error.Failed` "Operation failed with ATT error: 0xfc" for codes without a
        /// dedicated error). Writes without response to it are received and dropped. An empty
        /// `uuid` ends it.
        case rejectWrites = "reject-writes"
        /// Adapter power off (`powered` false) or on.
        case adapterPower = "adapter-power"
        /// bluetoothd restarts and is back after `seconds` (the timings' `restartDelay` when none).
        /// By default it is stopped as `systemctl stop bluetooth` stops it (SIGTERM), which
        /// bluetoothd 5.66 answers by powering its adapters off through the kernel: the
        /// AcquireNotify sockets hang up, every link's `Connected` turns false (no reason), each
        /// powered adapter's `Powered` turns false (`PowerState` "off", no "on-disabling" first),
        /// and then its name leaves the bus (no InterfacesRemoved). With `killed` true it dies
        /// as by SIGKILL: its name leaves at once, with nothing announced; the links stay up in
        /// the kernel, which ends them `leftBehindLinkTimeout` after the kill (`Connected` false,
        /// no reason, once it is back), and meanwhile the restarted bluetoothd reports them
        /// connected, with services not resolved.
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
    /// For `restart`: bluetoothd is killed (SIGKILL) rather than stopped (SIGTERM).
    public var killed: Bool?
    /// For `reject-writes`: the ATT error code (1…255) the device answers with.
    public var attError: Int?

    public init(
        _ kind: Kind, device: String? = nil, adapter: String? = nil, error: String? = nil, probability: Double? = nil,
        seconds: Double? = nil, uuid: String? = nil, powered: Bool? = nil, killed: Bool? = nil,
        attError: Int? = nil
    ) {
        self.kind = kind
        self.device = device
        self.adapter = adapter
        self.error = error
        self.probability = probability
        self.seconds = seconds
        self.uuid = uuid
        self.powered = powered
        self.killed = killed
        self.attError = attError
    }
}
