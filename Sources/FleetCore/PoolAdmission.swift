import GATT

/// Which unpinned devices may join the pool, and with what priority and class: `[pool]`'s
/// eligibility filters (name prefixes, services, RSSI) and its rules, applied to what BlueZ
/// shows of a device. Pure; the configuration builds it from `[pool]` and `[fleet] min_rssi`.
public struct PoolAdmission: Sendable, Hashable, Codable {
    /// Eligible only if the advertised name starts with one of these; empty: any name.
    public var namePrefixes: [String]
    /// Eligible only if the device advertises one of these services; empty: any.
    public var services: [BluetoothUUID]
    /// Eligible only at or above this RSSI (dBm), when the device reports one.
    public var minimumRSSI: Int
    public var defaultClass: String
    public var defaultPriority: Int
    /// Tried in order; the first that matches gives priority and class.
    public var rules: [PoolRule]

    public init(
        namePrefixes: [String] = [], services: [BluetoothUUID] = [], minimumRSSI: Int, defaultClass: String,
        defaultPriority: Int = 0, rules: [PoolRule] = []
    ) {
        self.namePrefixes = namePrefixes
        self.services = services
        self.minimumRSSI = minimumRSSI
        self.defaultClass = defaultClass
        self.defaultPriority = defaultPriority
        self.rules = rules
    }

    /// Whether a device with this advertisement passes the filters.
    public func isEligible(name: String?, services advertised: Set<BluetoothUUID>, rssi: Int?) -> Bool {
        if !namePrefixes.isEmpty, !namePrefixes.contains(where: { (name ?? "").hasPrefix($0) }) { return false }
        if !services.isEmpty, advertised.isDisjoint(with: services) { return false }
        if let rssi, rssi < minimumRSSI { return false }
        return true
    }

    /// Priority and class of a pool device: from the first matching rule, else the defaults.
    public func classify(name: String?, services advertised: Set<BluetoothUUID>) -> (priority: Int, className: String) {
        let rule = rules.first { $0.matches(name: name, services: advertised) }
        return (rule?.priority ?? defaultPriority, rule?.className ?? defaultClass)
    }

    /// nil when the device is not eligible. `services` are UUID strings as BlueZ spells them;
    /// one that does not parse is ignored.
    public func admit(name: String?, services: [String], rssi: Int?) -> (priority: Int, className: String)? {
        let advertised = Set(services.compactMap { BluetoothUUID($0) })
        guard isEligible(name: name, services: advertised, rssi: rssi) else { return nil }
        return classify(name: name, services: advertised)
    }
}
