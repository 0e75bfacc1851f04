// The daemon maps each device actor's state onto this snapshot; the pool policy never sees the
// device state machine's own types, so the two can evolve separately.

/// One device as the pool policy sees it at the moment of a decision.
public struct PoolDeviceSnapshot: Hashable, Sendable {
    /// Pinned devices are always wanted when reachable; pool devices compete for what is left.
    public enum Membership: Hashable, Sendable {
        case pinned
        case pool
    }

    public var id: DeviceID
    public var membership: Membership
    /// False when configuration or state excludes the device (removed, blocked, not paired, …).
    public var isEligible: Bool
    public var configuredPriority: Int
    /// Last RSSI (dBm) each adapter reported for the device. BlueZ stops reporting RSSI once a
    /// device is connected, so the daemon should keep the last value it saw rather than drop it.
    public var rssi: [AdapterID: Int]
    /// Adapters that can connect the device without seeing it advertise now (BlueZ still holds
    /// its device object, e.g. a bonded device with a known address).
    public var knownConnectable: Set<AdapterID>
    public var link: PoolLinkStatus
    /// The device's own retry timing allows an attempt now (its backoff has elapsed).
    public var wantsAttempt: Bool
    public var restoreInProgress: Bool
    public var recentFailures: Int

    public init(
        id: DeviceID,
        membership: Membership,
        isEligible: Bool = true,
        configuredPriority: Int = 0,
        rssi: [AdapterID: Int] = [:],
        knownConnectable: Set<AdapterID> = [],
        link: PoolLinkStatus = .disconnected,
        wantsAttempt: Bool = false,
        restoreInProgress: Bool = false,
        recentFailures: Int = 0
    ) {
        self.id = id
        self.membership = membership
        self.isEligible = isEligible
        self.configuredPriority = configuredPriority
        self.rssi = rssi
        self.knownConnectable = knownConnectable
        self.link = link
        self.wantsAttempt = wantsAttempt
        self.restoreInProgress = restoreInProgress
        self.recentFailures = recentFailures
    }

    public var isPinned: Bool { membership == .pinned }

    /// An adapter reaches a device if it sees it, can connect it from what it knows, or already
    /// holds a link or an attempt to it.
    public func isReachable(on adapter: AdapterID) -> Bool {
        rssi[adapter] != nil || knownConnectable.contains(adapter) || link.adapter == adapter
    }
}
