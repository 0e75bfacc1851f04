/// What the simulator counted since start (or the last reset): for tests and benchmarks to check
/// what a client really did to the "radio".
public struct SimulatorCounters: Sendable, Hashable, Codable {
    /// `Connect`/`ConnectDevice`/`Pair`-triggered connection attempts, by device address.
    public var connectAttempts: [String: Int] = [:]
    /// Bonds made by `Pair`, per device; pairings that failed (wrong or no passkey, the link
    /// lost meanwhile); agent requests made (`RequestPasskey`).
    public var pairings: [String: Int] = [:]
    public var pairingFailures = 0
    public var agentRequests = 0
    /// The most connection attempts in flight at once on each adapter.
    public var maxConcurrentAttempts: [String: Int] = [:]
    /// Notifications delivered (D-Bus PropertiesChanged or AcquireNotify datagrams), by device.
    public private(set) var notificationsSent: [String: Int] = [:]
    /// The sum of `notificationsSent`, kept as they are counted (a test waiting for a total is
    /// answered per notification).
    public private(set) var totalNotificationsSent = 0
    /// Notifications dropped because an AcquireNotify client did not read.
    public var notificationsDropped = 0
    /// Writes received (WriteValue or AcquireWrite datagrams), by device.
    public var writesReceived: [String: Int] = [:]
    /// Writes the device refused (`reject-writes`): requests answered with an ATT error, and
    /// writes without response dropped. Counted in `writesReceived` too.
    public var writesRefused: [String: Int] = [:]
    /// Advertisements a stalled discovery (`stall-discovery`) did not report, by device.
    public var advertisementsUnreported: [String: Int] = [:]
    /// Link drops the simulator caused (link loss, out of range).
    public var linkDrops: [String: Int] = [:]
    /// `Device1.Disconnect` calls held by a `disconnect-delay` fault that have not answered yet.
    public var disconnectsPending = 0
    /// Passers-by that came into range, and those forgotten again (gone, objects expired).
    public var passersByArrived = 0
    public var passersByGone = 0
    /// Measurement devices (cuffs, scales): wake-ups (scheduled or asked for), measurements
    /// taken, measurements delivered to a client (indications that reached the bus), and Current
    /// Time writes the device took, by device; with the last Current Time value each took (10 bytes).
    public var wakeUps: [String: Int] = [:]
    public var recordsTaken: [String: Int] = [:]
    public var recordsDelivered: [String: Int] = [:]
    public var clockWrites: [String: Int] = [:]
    public var lastClockWritten: [String: [UInt8]] = [:]
    /// `Connect` calls waiting now, per adapter, for a sleeping device to advertise (Linux's LE
    /// connection by passive scanning; not counted in `maxConcurrentAttempts`).
    public var pendingConnects: [String: Int] = [:]

    public init() {}

    mutating func countNotificationSent(by address: String) {
        notificationsSent[address, default: 0] += 1
        totalNotificationsSent += 1
    }

    public var totalWritesReceived: Int { writesReceived.values.reduce(0, +) }
    public var totalConnectAttempts: Int { connectAttempts.values.reduce(0, +) }
}
