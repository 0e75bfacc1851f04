/// The fleet as the control interface reports it: `GetStatus`, plus the devices from
/// `ListDevices` when a reader asked for both.
public struct ControlStatus: Sendable, Hashable {
    /// The daemon's version.
    public var version: String
    public var bluetoothdPresent: Bool
    public var pinnedReady: UInt32
    public var pinnedTotal: UInt32
    /// Pool devices that are ready.
    public var poolConnected: UInt32
    /// How many devices the daemon manages (pinned and pool).
    public var deviceCount: UInt32
    /// The one-line summary systemd shows as the unit's status.
    public var summary: String
    public var adapters: [ControlAdapter]
    /// Empty from `GetStatus` alone.
    public var devices: [ControlDevice]

    public init(
        version: String, bluetoothdPresent: Bool, pinnedReady: UInt32, pinnedTotal: UInt32, poolConnected: UInt32,
        deviceCount: UInt32, summary: String, adapters: [ControlAdapter], devices: [ControlDevice] = []
    ) {
        self.version = version
        self.bluetoothdPresent = bluetoothdPresent
        self.pinnedReady = pinnedReady
        self.pinnedTotal = pinnedTotal
        self.poolConnected = poolConnected
        self.deviceCount = deviceCount
        self.summary = summary
        self.adapters = adapters
        self.devices = devices
    }
}
