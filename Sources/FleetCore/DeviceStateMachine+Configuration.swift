extension DeviceStateMachine {
    /// What one device must offer and what to do once linked. UUIDs are BlueZ's lower-case
    /// 128-bit strings (`0000180d-0000-1000-8000-00805f9b34fb`).
    public struct Configuration: Hashable, Sendable {
        /// Services that must be present; a missing one is a `protocol` failure.
        public var requiredServices: Set<String>
        /// Characteristics that must be present; a missing one is a `protocol` failure.
        public var requiredCharacteristics: Set<String>
        /// Read once after every connect, in this order.
        public var readOnConnect: [String]
        /// Subscribed after every connect, in this order.
        public var subscriptions: [String]
        /// Use `AcquireNotify` sockets instead of `StartNotify`.
        public var useFileDescriptorPath: Bool
        public var timeouts: Timeouts
        /// Consecutive failed writes that make a ready device `degraded`. 3.
        public var writeFailureThreshold: Int
        /// Bond before reading or subscribing when the device is not paired (`state` `pairing`).
        /// Without it the device still bonds when a characteristic answers that it needs
        /// encryption.
        public var bond: Bool
        /// The device sleeps between sessions and wakes only to measure: absent is its normal
        /// state (`asleep`), a `Connect` is left pending for its next wake, and the end of a
        /// session (the device disconnects once it has sent what it had) is no failure.
        public var intermittent: Bool
        /// Write the gateway's time to the device's Current Time (0x2A2B) on every connection,
        /// after bonding, so that its measurements carry the right time stamps.
        public var setTime: Bool

        public init(
            requiredServices: Set<String> = [],
            requiredCharacteristics: Set<String> = [],
            readOnConnect: [String] = [],
            subscriptions: [String] = [],
            useFileDescriptorPath: Bool = false,
            timeouts: Timeouts = Timeouts(),
            writeFailureThreshold: Int = 3,
            bond: Bool = false,
            intermittent: Bool = false,
            setTime: Bool = false
        ) {
            self.setTime = setTime
            self.bond = bond
            self.intermittent = intermittent
            self.requiredServices = requiredServices
            self.requiredCharacteristics = requiredCharacteristics
            self.readOnConnect = readOnConnect
            self.subscriptions = subscriptions
            self.useFileDescriptorPath = useFileDescriptorPath
            self.timeouts = timeouts
            self.writeFailureThreshold = max(writeFailureThreshold, 1)
        }
    }

    /// Bounds on every operation that can hang. Defaults sit above BlueZ's own timeouts where it
    /// has one (LE connect gives up after about 20–40 s depending on version), so the daemon's
    /// timer normally fires only when bluetoothd itself is stuck.
    public struct Timeouts: Hashable, Sendable, Codable {
        public var resolve: Duration
        public var connect: Duration
        public var discovery: Duration
        public var subscribe: Duration
        /// At most `maximumWrite`: a waited-for write answers within 24 s (its queue wait, this
        /// and a 1 s margin), and keeps at least 3 s for its turn in the queue.
        public var write: Duration
        public static let maximumWrite: Duration = .seconds(20)
        /// How often a degraded device retries its missing subscriptions.
        public var recoveryInterval: Duration
        /// Bounds one bonding (`Device1.Pair`); above the runtime's own 24 s bound on the call
        /// (it cancels the pairing then), so this fires only when bluetoothd itself is stuck.
        public var pairing: Duration

        public init(
            resolve: Duration = .seconds(30),
            connect: Duration = .seconds(45),
            discovery: Duration = .seconds(30),
            subscribe: Duration = .seconds(15),
            write: Duration = .seconds(10),
            recoveryInterval: Duration = .seconds(30),
            pairing: Duration = .seconds(35)
        ) {
            self.pairing = pairing
            self.resolve = resolve
            self.connect = connect
            self.discovery = discovery
            self.subscribe = subscribe
            self.write = write
            self.recoveryInterval = recoveryInterval
        }
    }
}

extension DeviceStateMachine {
    /// Applies a reloaded class configuration and reconnect policy without touching the link:
    /// what to read, subscribe and require takes effect at the next connection, timeouts at the
    /// next timer armed, and the reconnect controller keeps its failure counts and breaker.
    public mutating func reconfigure(_ configuration: Configuration, reconnectPolicy: ReconnectPolicy) {
        self.configuration = configuration
        reconnect.policy = reconnectPolicy
    }
}

extension DeviceStateMachine.Timeouts {
    private enum CodingKeys: String, CodingKey {
        case resolve, connect, discovery, subscribe, write, recoveryInterval, pairing
    }

    /// Recordings made before bonding existed have no `pairing`: they get the default.
    public init(from decoder: any Decoder) throws {
        let values = try decoder.container(keyedBy: CodingKeys.self)
        let defaults = DeviceStateMachine.Timeouts()
        self.init(
            resolve: try values.decode(Duration.self, forKey: .resolve),
            connect: try values.decode(Duration.self, forKey: .connect),
            discovery: try values.decode(Duration.self, forKey: .discovery),
            subscribe: try values.decode(Duration.self, forKey: .subscribe),
            write: try values.decode(Duration.self, forKey: .write),
            recoveryInterval: try values.decode(Duration.self, forKey: .recoveryInterval),
            pairing: try values.decodeIfPresent(Duration.self, forKey: .pairing) ?? defaults.pairing)
    }

    public func encode(to encoder: any Encoder) throws {
        var values = encoder.container(keyedBy: CodingKeys.self)
        try values.encode(resolve, forKey: .resolve)
        try values.encode(connect, forKey: .connect)
        try values.encode(discovery, forKey: .discovery)
        try values.encode(subscribe, forKey: .subscribe)
        try values.encode(write, forKey: .write)
        try values.encode(recoveryInterval, forKey: .recoveryInterval)
        try values.encode(pairing, forKey: .pairing)
    }
}
