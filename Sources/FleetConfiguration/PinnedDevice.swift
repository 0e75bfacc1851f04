import TOML
import FleetCore

/// One `[[pinned]]` entry: a device the daemon keeps connected whenever it is reachable.
public struct PinnedDevice: Equatable, Sendable {
    public var id: DeviceID
    public var name: String?
    /// The `[classes.NAME]` it uses; `default` unless given.
    public var className: String
    /// Orders pinned devices among themselves (higher first) when slots run short. Default 0.
    public var priority: Int
    /// `preferred_gateways`: the gateways that bid higher for this device when several share the
    /// fleet (`[cluster]`), by `[mqtt] gateway_id`. Default none.
    public var preferredGateways: Set<GatewayID>
    /// Where the entry was written (its `[[pinned]]` header), for logs and reload messages.
    public var definedAt: TOMLPosition

    public init(
        id: DeviceID, name: String? = nil, className: String = DeviceClassSettings.defaultName, priority: Int = 0,
        preferredGateways: Set<GatewayID> = [], definedAt: TOMLPosition
    ) {
        self.id = id
        self.name = name
        self.className = className
        self.priority = priority
        self.preferredGateways = preferredGateways
        self.definedAt = definedAt
    }
}
