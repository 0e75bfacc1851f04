/// What the instances of a shared world record together (`ledger.json` in the world directory):
/// who holds each device's one link, and the world's counters. It outlives every instance, so a
/// test reads it after instances died too (`SharedWorld.snapshot()`, or `GetWorld` on a live
/// instance's control interface).
///
/// Counters count from the world directory's creation; a device has a record once an instance
/// that hears it joined.
public struct WorldLedger: Codable, Sendable, Hashable {
    /// By gateway id.
    public var gateways: [String: WorldGatewayRecord] = [:]
    /// By device address.
    public var devices: [String: WorldDeviceRecord] = [:]

    public init() {}

    /// The device's record, or an empty one.
    public func device(_ address: String) -> WorldDeviceRecord { devices[address] ?? WorldDeviceRecord() }
}

/// One gateway in `WorldLedger`.
public struct WorldGatewayRecord: Codable, Sendable, Hashable {
    /// The process of its latest instance.
    public var pid: Int32
    /// How many instances joined the world as this gateway.
    public var joins: Int
    /// An instance runs as this gateway: its lock was held when the ledger was last read (an
    /// instance that died is seen at the next read).
    public var running: Bool

    public init(pid: Int32, joins: Int, running: Bool) {
        self.pid = pid
        self.joins = joins
        self.running = running
    }
}

/// One device in `WorldLedger`.
public struct WorldDeviceRecord: Codable, Sendable, Hashable {
    /// The gateway whose instance has the device's link, or an attempt at it: while there is one,
    /// the device advertises to nobody. Absent when it advertises.
    public var holder: String?
    /// The gateways whose link to the device is up now. More than one is a double link, which
    /// the world makes impossible (see `doubleLinks`).
    public var linkedBy: [String] = []
    /// Links that came up, per gateway.
    public var linksMade: [String: Int] = [:]
    /// `Connect` attempts per gateway that found the device held by another gateway: each would
    /// have made a double link, and failed as an attempt to a device that does not advertise.
    public var connectsWhileHeldElsewhere: [String: Int] = [:]
    /// Links that came up while another gateway's link was up (must stay 0: a check of the
    /// claim, made where the link comes up).
    public var doubleLinks = 0
    /// Holds (links or attempts) that ended because their gateway's instance died, per gateway.
    public var heldAtDeath: [String: Int] = [:]
    /// Run-time RSSI per gateway (`SetWorldRSSI`), overriding the scenario's `heardByGateways`.
    public var rssi: [String: Int] = [:]

    public init() {}

    /// Every link made, whichever gateway made it.
    public var totalLinksMade: Int { linksMade.values.reduce(0, +) }
}
