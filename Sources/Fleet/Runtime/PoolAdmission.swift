import GATT

/// Which unpinned devices may join the pool, and with what priority and class: `[pool]`'s
/// eligibility filters (name prefixes, services, RSSI) and its rules, applied to what BlueZ
/// shows of a device.
public struct PoolAdmission: Sendable, Equatable {
    public var settings: PoolSettings
    public var fleetMinimumRSSI: Int

    public init(settings: PoolSettings, fleetMinimumRSSI: Int) {
        self.settings = settings
        self.fleetMinimumRSSI = fleetMinimumRSSI
    }

    /// nil when the device is not eligible.
    public func admit(name: String?, services: [String], rssi: Int?) -> (priority: Int, className: String)? {
        let advertised = Set(services.compactMap { BluetoothUUID($0) })
        guard settings.isEligible(name: name, services: advertised, rssi: rssi, fleetMinimumRSSI: fleetMinimumRSSI) else {
            return nil
        }
        return settings.classify(name: name, services: advertised)
    }
}
