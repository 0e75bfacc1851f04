import DBus

extension ControlAdapter {
    /// The `a{sv}` keys, as documented in README ("Control interface").
    enum Key {
        static let id = "Id"
        static let powered = "Powered"
        static let slots = "Slots"
        static let used = "Used"
        static let discovering = "Discovering"
    }

    /// This adapter as an `a{sv}` map.
    public var properties: [String: DBusValue] {
        [
            Key.id: .string(id), Key.powered: .boolean(powered), Key.slots: .uint32(slots), Key.used: .uint32(used),
            Key.discovering: .boolean(discovering),
        ]
    }

    /// Reads an adapter from an `a{sv}` map; only `Id` is required.
    public init(properties map: [String: DBusValue]) throws {
        self.init(
            id: try map.required(String.self, Key.id, in: "an adapter"),
            powered: try map.decodeIfPresent(Bool.self, forKey: Key.powered) ?? false,
            slots: try map.decodeIfPresent(UInt32.self, forKey: Key.slots) ?? 0,
            used: try map.decodeIfPresent(UInt32.self, forKey: Key.used) ?? 0,
            discovering: try map.decodeIfPresent(Bool.self, forKey: Key.discovering) ?? false)
    }
}
