import TOML
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

    /// The admission rules these settings give, with `[fleet] min_rssi` as the RSSI floor when
    /// `[pool]` sets none.
    public func admission(fleetMinimumRSSI: Int) -> PoolAdmission {
        PoolAdmission(
            namePrefixes: namePrefixes, services: services, minimumRSSI: minimumRSSI ?? fleetMinimumRSSI,
            defaultClass: defaultClass, defaultPriority: defaultPriority, rules: rules)
    }
}
