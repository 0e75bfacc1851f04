import FleetCore
import GATT

/// `[pool]`: which discovered, unpinned devices may use the connections pinned devices leave free,
/// and how they are ranked.
public struct PoolSettings: Equatable, Sendable {
    /// False: only pinned devices are connected. Default true.
    public var enabled: Bool = true
    /// Eligible only if the advertised name starts with one of these; empty: any name.
    public var namePrefixes: [String] = []
    /// Eligible only if the device advertises one of these services; empty: any.
    public var services: [BluetoothUUID] = []
    /// Eligible only at or above this RSSI (dBm); nil: `[fleet] min_rssi`.
    public var minimumRSSI: Int?
    public var defaultClass: String = DeviceClassSettings.defaultName
    public var defaultPriority: Int = 0
    public var minimumDwell: Duration = .seconds(60)
    public var scoreMargin: Double = 10
    public var weights = PoolScoreWeights()
    public var rules: [PoolRule] = []

    public init() {}

    /// Whether an unpinned device with this advertisement may join the pool.
    public func isEligible(name: String?, services advertised: Set<BluetoothUUID>, rssi: Int?, fleetMinimumRSSI: Int) -> Bool {
        guard enabled else { return false }
        if !namePrefixes.isEmpty, !namePrefixes.contains(where: { (name ?? "").hasPrefix($0) }) { return false }
        if !services.isEmpty, advertised.isDisjoint(with: services) { return false }
        if let rssi, rssi < (minimumRSSI ?? fleetMinimumRSSI) { return false }
        return true
    }

    /// Priority and class of a pool device: from the first matching rule, else the defaults.
    public func classify(name: String?, services advertised: Set<BluetoothUUID>) -> (priority: Int, className: String) {
        let rule = rules.first { $0.matches(name: name, services: advertised) }
        return (rule?.priority ?? defaultPriority, rule?.className ?? defaultClass)
    }
}
