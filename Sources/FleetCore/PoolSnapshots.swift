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
    /// Adapters whose bluetoothd holds the device's keys. A bonded device is placed only there
    /// while one of them can reach it: through another adapter it would have to bond again, and
    /// a device that keeps one bond would lose the first.
    public var bondedOn: Set<AdapterID>
    /// The attempt it wants is a sleeping device's pending `Connect` (`standing`): it holds no
    /// LE Create Connection, so it neither waits for the adapter's attempt in flight nor takes a
    /// token — a wake missed while a strap's attempt runs its 45 s would be a lost measurement.
    public var waitsForWake: Bool

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
        recentFailures: Int = 0,
        bondedOn: Set<AdapterID> = [],
        waitsForWake: Bool = false
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
        self.bondedOn = bondedOn
        self.waitsForWake = waitsForWake
    }

    public var isPinned: Bool { membership == .pinned }

    /// An adapter reaches a device if it sees it, can connect it from what it knows, or already
    /// holds a link or an attempt to it.
    public func isReachable(on adapter: AdapterID) -> Bool {
        rssi[adapter] != nil || knownConnectable.contains(adapter) || link.adapter == adapter
    }
}

// MARK: -

/// Where a device's link stands, as far as slot accounting is concerned. Both an attempt in
/// flight and an established link hold one slot of their adapter.
public enum PoolLinkStatus: Hashable, Sendable {
    case disconnected
    case attempting(AdapterID)
    case connected(AdapterID, since: MonotonicInstant)
    /// A sleeping device's pending `Connect` waits on this adapter for it to wake: it holds a
    /// slot there (its link will), but no attempt in flight — Linux waits for it by passive
    /// scanning, not with an LE Create Connection — so the adapter stays free for attempts.
    case standing(AdapterID)

    /// The adapter whose slot this link holds, if any.
    public var adapter: AdapterID? {
        switch self {
        case .disconnected: nil
        case .attempting(let adapter), .connected(let adapter, _), .standing(let adapter): adapter
        }
    }

    public var isAttempting: Bool {
        if case .attempting = self { true } else { false }
    }
}

// MARK: -

/// What the pool policy needs to know about one local adapter at the moment of a decision.
///
/// An adapter that is not powered offers no slots and receives no attempts; its slot count comes
/// from `PoolConfiguration.slots(for:)`.
public struct AdapterSnapshot: Hashable, Sendable {
    public var id: AdapterID
    public var isPowered: Bool

    public init(id: AdapterID, isPowered: Bool) {
        self.id = id
        self.isPowered = isPowered
    }
}

// MARK: -

/// Conditions that hold for the whole fleet at once; when either is false no attempt is granted
/// and no eviction is asked for, because there is nothing that could carry them out.
public struct PoolCentralConditions: Hashable, Sendable {
    /// bluetoothd owns its bus name.
    public var bluetoothdPresent: Bool
    /// The engine has been started and is not stopping.
    public var engineRunning: Bool

    public init(bluetoothdPresent: Bool, engineRunning: Bool) {
        self.bluetoothdPresent = bluetoothdPresent
        self.engineRunning = engineRunning
    }

    public static let running = PoolCentralConditions(bluetoothdPresent: true, engineRunning: true)
}
