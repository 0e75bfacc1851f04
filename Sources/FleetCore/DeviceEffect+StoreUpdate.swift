extension DeviceEffect {
    /// What the state file should now hold for the device. The runtime stamps wall-clock time
    /// itself (FleetCore only has monotonic time, which does not survive a reboot).
    public struct StoreUpdate: Hashable, Sendable, Codable {
        /// Every service UUID ever seen on the device, sorted.
        public var servicesSeen: [String]
        /// Whether the device has ever reached `ready`.
        public var hasBeenReady: Bool
        /// The device just reached `ready`: record "last connected" as now.
        public var connectedNow: Bool

        public init(servicesSeen: [String], hasBeenReady: Bool, connectedNow: Bool) {
            self.servicesSeen = servicesSeen
            self.hasBeenReady = hasBeenReady
            self.connectedNow = connectedNow
        }
    }
}
