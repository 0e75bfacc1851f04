import FleetCore

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
        public var sessions: UInt64
        public var notifications: Int
        public var decodeErrors: Int
    }

    public struct Adapter: Sendable {
        public var id: AdapterID
        public var powered: Bool
        public var slots: Int
        public var linksAndAttempts: Int
        /// Connection attempts in flight on the adapter (at most one when the gate works).
        public var attemptsInFlight: Int
        public var discovering: Bool
    }

    public var bluetoothdPresent: Bool
    public var devices: [Device]
    public var adapters: [Adapter]

    public var pinnedReady: Int { devices.filter { $0.pinned && $0.state == .ready }.count }
    public var pinnedTotal: Int { devices.filter(\.pinned).count }
    public var poolConnected: Int { devices.filter { !$0.pinned && $0.state == .ready }.count }

    /// One line for systemd's `STATUS=`: "7/8 pinned ready, 3 pool, hci0 4/5 slots".
    public var summary: String {
        var parts = ["\(pinnedReady)/\(pinnedTotal) pinned ready", "\(poolConnected) pool"]
        if !bluetoothdPresent { parts.append("bluetoothd absent") }
        for adapter in adapters.sorted(by: { $0.id < $1.id }) {
            parts.append(adapter.powered ? "\(adapter.id) \(adapter.linksAndAttempts)/\(adapter.slots) slots" : "\(adapter.id) off")
        }
        return parts.joined(separator: ", ")
    }
}
