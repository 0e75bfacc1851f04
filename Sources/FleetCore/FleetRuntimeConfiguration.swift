
/// What the orchestrator runs with, already validated and mapped onto FleetCore's types (the
/// configuration file is parsed and checked elsewhere).
public struct FleetRuntimeConfiguration: Sendable, Hashable, Codable {
    /// A device that must always be connected when reachable.
    public struct PinnedDevice: Sendable, Hashable, Codable {
        public var id: DeviceID
        public var name: String?
        public var className: String
        public var priority: Int
        /// Where the configuration pins it (`file:line`), for refusals that point there; nil for
        /// a pin made at run time.
        public var definedAt: String?

        public init(id: DeviceID, name: String? = nil, className: String, priority: Int = 0, definedAt: String? = nil) {
            self.id = id
            self.name = name
            self.className = className
            self.priority = priority
            self.definedAt = definedAt
        }
    }

    /// How a class's writes are queued and sent.
    public struct WriteSettings: Sendable, Hashable, Codable {
        public var options: OutgoingDeviceOptions
        /// QoS of a write that names none.
        public var defaultQoS: OutgoingQoS

        public init(options: OutgoingDeviceOptions = OutgoingDeviceOptions(), defaultQoS: OutgoingQoS = .normal) {
            self.options = options
            self.defaultQoS = defaultQoS
        }
    }

    public var pinned: [PinnedDevice]
    /// `[pool]`'s eligibility filters and rules; when nil, `poolServiceFilter` alone decides and
    /// pool devices get `poolClassName` and priority 0.
    public var poolAdmission: PoolAdmission?
    /// Write settings by class name; a class not listed uses the defaults.
    public var writes: [String: WriteSettings] = [:]
    /// Device classes by name: what to read, subscribe to and require, and timeouts.
    public var classes: [String: DeviceStateMachine.Configuration]
    /// The class of pool devices (pool devices are found by scanning, so they share one class).
    public var poolClassName: String?
    public var poolEnabled: Bool
    /// A discovered device is pool-eligible when it advertises one of these services (lower-case
    /// 128-bit UUIDs); empty means any device.
    public var poolServiceFilter: Set<String>
    public var pool: PoolConfiguration
    public var reconnect: ReconnectPolicy
    /// Adapters to use (`hci0`…); empty means every adapter bluetoothd has.
    public var adapters: Set<AdapterID>
    public var scanUUIDs: [String]
    public var minimumRSSI: Int16?
    /// Disconnect the links the daemon made when it stops (BlueZ keeps them otherwise).
    public var disconnectOnStop: Bool

    public init(
        pinned: [PinnedDevice] = [], classes: [String: DeviceStateMachine.Configuration] = [:],
        poolClassName: String? = nil, poolEnabled: Bool = false, poolServiceFilter: Set<String> = [],
        pool: PoolConfiguration = PoolConfiguration(maxConnections: 10), reconnect: ReconnectPolicy = ReconnectPolicy(),
        adapters: Set<AdapterID> = [], scanUUIDs: [String] = [], minimumRSSI: Int16? = nil, disconnectOnStop: Bool = true
    ) {
        self.pinned = pinned
        self.classes = classes
        self.poolClassName = poolClassName
        self.poolEnabled = poolEnabled
        self.poolServiceFilter = poolServiceFilter
        self.pool = pool
        self.reconnect = reconnect
        self.adapters = adapters
        self.scanUUIDs = scanUUIDs
        self.minimumRSSI = minimumRSSI
        self.disconnectOnStop = disconnectOnStop
    }

    public func writeSettings(className: String?) -> WriteSettings {
        className.flatMap { writes[$0] } ?? WriteSettings()
    }

    public func deviceConfiguration(className: String?) -> DeviceStateMachine.Configuration {
        className.flatMap { classes[$0] } ?? DeviceStateMachine.Configuration()
    }
}
