import TOML
import FleetCore

/// The daemon's whole configuration, valid by construction: it is only ever produced by
/// `ConfigurationLoader` (or `WearfleetConfiguration()`, the built-in defaults), which reports
/// every problem instead of returning a partial value. A reload swaps it as one value.
public struct WearfleetConfiguration: Equatable, Sendable {
    public var daemon = DaemonSettings()
    public var fleet = FleetSettings()
    /// In the order written, main file first; a drop-in re-pinning an address replaces that
    /// entry in place.
    public var pinned: [PinnedDevice] = []
    public var pool = PoolSettings()
    public var reconnect = ReconnectPolicy()
    /// By name; always contains `default`.
    public var classes: [String: DeviceClassSettings] = [DeviceClassSettings.defaultName: DeviceClassSettings(name: DeviceClassSettings.defaultName)]
    public var metrics = MetricsSettings()
    public var mqtt = MQTTSettings()
    public var cluster = ClusterSettings()
    public var pairing = PairingSettings()
    /// The files the configuration was read from, in the order they were applied.
    public var sources: [String] = []

    /// The built-in defaults: no pinned devices, pool enabled, every adapter.
    public init() {}

    /// The class `name`, or the built-in default when it is not defined (validation guarantees
    /// every name in a loaded configuration is defined).
    public func deviceClass(named name: String) -> DeviceClassSettings {
        classes[name] ?? classes[DeviceClassSettings.defaultName] ?? DeviceClassSettings(name: DeviceClassSettings.defaultName)
    }
}
