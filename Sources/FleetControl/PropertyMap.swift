import DBus

// Reading and writing the `a{sv}` maps of the control interface. Maps from the bus are
// untrusted: a missing required key or a mistyped value is an error, never a trap; keys this
// version does not know are ignored, so a newer daemon can add fields.

/// The D-Bus type of one `a{sv}` map and of a list of them.
let propertyMapType = DBusType.dictionary(key: .string, value: .variant)
let propertyMapListType = DBusType.array(propertyMapType)

extension Dictionary where Key == String, Value == DBusValue {
    /// A required entry.
    func required<T: DBusRepresentable>(_ type: T.Type, _ key: String, in what: String) throws -> T {
        guard let value = try decodeIfPresent(type, forKey: key) else { throw ControlProtocolError.missing(key, in: what) }
        return value
    }

    /// Sets `key` only when `value` is present: absent keys mean "unknown".
    mutating func setIfPresent<T: DBusRepresentable>(_ key: String, _ value: T?) {
        if let value { self[key] = value.dbusValue }
    }
}
