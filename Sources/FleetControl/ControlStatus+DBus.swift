import DBus

extension ControlStatus {
    /// The `a{sv}` keys of `GetStatus`, as documented in README ("Control interface").
    enum Key {
        static let version = "Version"
        static let bluetoothdPresent = "BluetoothdPresent"
        static let pinnedReady = "PinnedReady"
        static let pinnedTotal = "PinnedTotal"
        static let poolConnected = "PoolConnected"
        static let deviceCount = "Devices"
        static let summary = "Summary"
        static let adapters = "Adapters"
    }

    /// `GetStatus`'s reply: everything but the devices.
    public var properties: [String: DBusValue] {
        [
            Key.version: .string(version), Key.bluetoothdPresent: .boolean(bluetoothdPresent),
            Key.pinnedReady: .uint32(pinnedReady), Key.pinnedTotal: .uint32(pinnedTotal),
            Key.poolConnected: .uint32(poolConnected), Key.deviceCount: .uint32(deviceCount), Key.summary: .string(summary),
            Key.adapters: .array(element: propertyMapType, adapters.map { .stringVariantMap($0.properties) }),
        ]
    }

    /// Reads `GetStatus`'s reply; `Summary` is required, devices are left empty.
    public init(properties map: [String: DBusValue]) throws {
        let adapterMaps = try map.decodeIfPresent([[String: DBusValue]].self, forKey: Key.adapters) ?? []
        self.init(
            version: try map.decodeIfPresent(String.self, forKey: Key.version) ?? "unknown",
            bluetoothdPresent: try map.decodeIfPresent(Bool.self, forKey: Key.bluetoothdPresent) ?? false,
            pinnedReady: try map.decodeIfPresent(UInt32.self, forKey: Key.pinnedReady) ?? 0,
            pinnedTotal: try map.decodeIfPresent(UInt32.self, forKey: Key.pinnedTotal) ?? 0,
            poolConnected: try map.decodeIfPresent(UInt32.self, forKey: Key.poolConnected) ?? 0,
            deviceCount: try map.decodeIfPresent(UInt32.self, forKey: Key.deviceCount) ?? 0,
            summary: try map.required(String.self, Key.summary, in: "the status"),
            adapters: try adapterMaps.map(ControlAdapter.init(properties:)))
    }
}
