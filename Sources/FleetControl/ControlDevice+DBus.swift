import DBus

extension ControlDevice {
    /// The `a{sv}` keys, as documented in README ("Control interface"). Unknown values are
    /// left out of the map rather than sent as empty strings or zeros.
    enum Key {
        static let address = "Address"
        static let addressType = "AddressType"
        static let name = "Name"
        static let pinned = "Pinned"
        static let className = "Class"
        static let state = "State"
        static let stateReason = "StateReason"
        static let retryAttempt = "RetryAttempt"
        static let nextAttemptIn = "NextAttemptIn"
        static let adapter = "Adapter"
        static let rssi = "RSSI"
        static let lastValue = "LastValue"
        static let lastValueTime = "LastValueTime"
        static let sessions = "Sessions"
        static let reconnects = "Reconnects"
        static let notifications = "Notifications"
        static let decodeErrors = "DecodeErrors"
        static let lastError = "LastError"
        static let owner = "Owner"
    }

    /// This device as an `a{sv}` map.
    public var properties: [String: DBusValue] {
        var map: [String: DBusValue] = [
            Key.address: .string(address), Key.addressType: .string(addressType), Key.pinned: .boolean(pinned),
            Key.state: .string(state), Key.sessions: .uint64(sessions), Key.reconnects: .uint64(reconnects),
            Key.notifications: .uint64(notifications), Key.decodeErrors: .uint64(decodeErrors),
        ]
        map.setIfPresent(Key.name, name)
        map.setIfPresent(Key.className, className)
        map.setIfPresent(Key.stateReason, stateReason)
        map.setIfPresent(Key.retryAttempt, retryAttempt)
        map.setIfPresent(Key.nextAttemptIn, nextAttemptIn)
        map.setIfPresent(Key.adapter, adapter)
        map.setIfPresent(Key.rssi, rssi)
        map.setIfPresent(Key.lastValue, lastValue)
        map.setIfPresent(Key.lastValueTime, lastValueTime)
        map.setIfPresent(Key.lastError, lastError)
        map.setIfPresent(Key.owner, owner)
        return map
    }

    /// Reads a device from an `a{sv}` map; `Address` and `State` are required.
    public init(properties map: [String: DBusValue]) throws {
        self.init(
            address: try map.required(String.self, Key.address, in: "a device"),
            addressType: try map.decodeIfPresent(String.self, forKey: Key.addressType) ?? "public",
            name: try map.decodeIfPresent(String.self, forKey: Key.name),
            pinned: try map.decodeIfPresent(Bool.self, forKey: Key.pinned) ?? false,
            className: try map.decodeIfPresent(String.self, forKey: Key.className),
            state: try map.required(String.self, Key.state, in: "a device"),
            stateReason: try map.decodeIfPresent(String.self, forKey: Key.stateReason),
            retryAttempt: try map.decodeIfPresent(UInt32.self, forKey: Key.retryAttempt),
            nextAttemptIn: try map.decodeIfPresent(Double.self, forKey: Key.nextAttemptIn),
            adapter: try map.decodeIfPresent(String.self, forKey: Key.adapter),
            rssi: try map.decodeIfPresent(Int16.self, forKey: Key.rssi),
            lastValue: try map.decodeIfPresent(String.self, forKey: Key.lastValue),
            sessions: try map.decodeIfPresent(UInt64.self, forKey: Key.sessions) ?? 0,
            reconnects: try map.decodeIfPresent(UInt64.self, forKey: Key.reconnects) ?? 0,
            notifications: try map.decodeIfPresent(UInt64.self, forKey: Key.notifications) ?? 0,
            decodeErrors: try map.decodeIfPresent(UInt64.self, forKey: Key.decodeErrors) ?? 0,
            lastError: try map.decodeIfPresent(String.self, forKey: Key.lastError),
            lastValueTime: try map.decodeIfPresent(Double.self, forKey: Key.lastValueTime),
            owner: try map.decodeIfPresent(String.self, forKey: Key.owner))
    }
}
