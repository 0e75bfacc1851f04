import FleetCore
import FoundationEssentials

/// A point-in-time view of the fleet, for `STATUS=`, the control interface and the demo view.
public struct FleetStatus: Sendable {
    public struct Device: Sendable, Identifiable {
        public var id: DeviceID
        public var name: String?
        public var pinned: Bool
        public var className: String?
        public var state: DeviceState
        public var adapter: AdapterID?
        public var rssi: Int?
        /// The last decoded value's one-line summary (`72 bpm, RR 812/799 ms`).
        public var lastValue: String?
        /// When the last decoded value arrived (a sleeping device's last measurement).
        public var lastValueAt: Date?
        /// Connection attempts granted so far (the session number of the latest one).
        public var sessions: UInt64
        /// Links the daemon made after its first one to this device.
        public var reconnects: UInt64
        public var notifications: Int
        public var decodeErrors: Int
        /// The class of the most recent failure, kept after the device recovered.
        public var lastFailure: FailureClass?
        /// Held disconnected by a `disconnect` command until `reconnect` (or `pin`).
        public var held: Bool
        /// The gateway that owns the device when several gateways share the fleet (`[cluster]`);
        /// nil when the cluster is off or nobody owns it.
        public var owner: String?
        /// What a wanted device without a link waits for (`FleetStateMachine.waitingReason`).
        public var waitingFor: FleetStateMachine.WaitingReason?

        public init(
            id: DeviceID, name: String? = nil, pinned: Bool, className: String? = nil, state: DeviceState,
            adapter: AdapterID? = nil, rssi: Int? = nil, lastValue: String? = nil, sessions: UInt64 = 0,
            reconnects: UInt64 = 0, notifications: Int = 0, decodeErrors: Int = 0, lastFailure: FailureClass? = nil, held: Bool = false,
            lastValueAt: Date? = nil, owner: String? = nil, waitingFor: FleetStateMachine.WaitingReason? = nil
        ) {
            self.waitingFor = waitingFor
            self.lastValueAt = lastValueAt
            self.owner = owner
            self.id = id
            self.name = name
            self.pinned = pinned
            self.className = className
            self.state = state
            self.adapter = adapter
            self.rssi = rssi
            self.lastValue = lastValue
            self.sessions = sessions
            self.reconnects = reconnects
            self.notifications = notifications
            self.decodeErrors = decodeErrors
            self.lastFailure = lastFailure
            self.held = held
        }
    }

    public struct Adapter: Sendable {
        public var id: AdapterID
        public var powered: Bool
        public var slots: Int
        public var linksAndAttempts: Int
        /// Connection attempts in flight on the adapter (at most one when the gate works).
        public var attemptsInFlight: Int
        public var discovering: Bool
        /// Discovery calls that failed on the adapter (`SetDiscoveryFilter`, `StartDiscovery`,
        /// `StopDiscovery`).
        public var discoveryErrors: Int

        public init(
            id: AdapterID, powered: Bool, slots: Int, linksAndAttempts: Int, attemptsInFlight: Int = 0, discovering: Bool,
            discoveryErrors: Int = 0
        ) {
            self.id = id
            self.powered = powered
            self.slots = slots
            self.linksAndAttempts = linksAndAttempts
            self.attemptsInFlight = attemptsInFlight
            self.discovering = discovering
            self.discoveryErrors = discoveryErrors
        }
    }

    public var bluetoothdPresent: Bool
    public var devices: [Device]
    /// Whether the configuration's pool is on, and the classes it defines (the gateway's `info`).
    public var poolEnabled = false
    public var classNames: [String] = []
    public var adapters: [Adapter]
    /// When the snapshot was taken, on the clock device deadlines (`backingOff`, `suspended`)
    /// are on; nil when unknown. Lets readers say "retry in 4 s" instead of showing an instant.
    public var capturedAt: MonotonicInstant?

    public init(bluetoothdPresent: Bool, devices: [Device], adapters: [Adapter], capturedAt: MonotonicInstant? = nil) {
        self.bluetoothdPresent = bluetoothdPresent
        self.devices = devices
        self.adapters = adapters
        self.capturedAt = capturedAt
    }

    public var pinnedReady: Int { devices.filter { $0.pinned && $0.state == .ready }.count }
    public var pinnedTotal: Int { devices.filter(\.pinned).count }
    public var poolConnected: Int { devices.filter { !$0.pinned && $0.state == .ready }.count }

    /// One line for systemd's `STATUS=`: "7/8 pinned ready, 3 pool, hci0 4/5 slots".
    public var summary: String {
        Self.summary(
            pinnedReady: pinnedReady, pinnedTotal: pinnedTotal, poolConnected: poolConnected,
            bluetoothdPresent: bluetoothdPresent, adapters: adapters.map { ($0.id, $0.powered, $0.linksAndAttempts, $0.slots) })
    }

    /// The summary line from counts alone (`FleetOrchestrator.summary()` counts without building
    /// a full status).
    static func summary(
        pinnedReady: Int, pinnedTotal: Int, poolConnected: Int, bluetoothdPresent: Bool,
        adapters: [(id: AdapterID, powered: Bool, used: Int, slots: Int)]
    ) -> String {
        var parts = ["\(pinnedReady)/\(pinnedTotal) pinned ready", "\(poolConnected) pool"]
        if !bluetoothdPresent { parts.append("bluetoothd absent") }
        for adapter in adapters.sorted(by: { $0.id < $1.id }) {
            parts.append(adapter.powered ? "\(adapter.id) \(adapter.used)/\(adapter.slots) slots" : "\(adapter.id) off")
        }
        return parts.joined(separator: ", ")
    }
}
