import DBus

/// Where a characteristic's values go, asked of the value receivers once per path (until
/// objects come or go). A class, so that a lookup on the hot path copies one reference.
final class CharacteristicRoute {
    /// Nil when the receivers want none of this characteristic's values.
    let receiver: BlueZValueReceiver?

    init(receiver: BlueZValueReceiver?) {
        self.receiver = receiver
    }
}

// Characteristic values for the value receivers (`setValueReceivers`), two ways: `claimValue`
// reads a notification in place before the connection decodes it (the way nearly every value
// takes); `characteristicValue` takes one that was decoded anyway (held during a snapshot and
// replayed), with the decoded path's one parse of `Value` (`BlueZCharacteristic.value(in:)`),
// which the `valueChanged` events share.
extension BlueZClient {
    /// Takes a signal whole when it is exactly what `handle` would pass to a value receiver:
    /// from the current bluetoothd, newer than the snapshot, not held, a `PropertiesChanged`
    /// (`sa{sv}as`) of `GattCharacteristic1` whose only change is `Value`, an `ay`, with nothing
    /// invalidated, of a mirrored characteristic. Anything else (including what `handle` counts
    /// as malformed, such as a `Value` that is not an `ay`) is left to be decoded and handled as
    /// before. Called by the connection, on its thread, before decoding: see
    /// `DBusConnection.subscribe(matching:claim:onSignals:onEnd:)`.
    func claimValue(_ message: borrowing DBusMessageReader) -> Bool {
        guard valueReceivers != nil, heldSignals == nil, let owner, message.serial > snapshotSerial, message.hasSender(owner),
            message.hasMember("PropertiesChanged", of: BlueZInterfaces.properties), message.hasSignature("sa{sv}as"),
            let bytes = Self.changedValue(message), let route = characteristicRoute(of: message)
        else { return false }
        route.receiver?(bytes)
        return true
    }

    /// The bytes of a `Value`-only change of `GattCharacteristic1` in a `sa{sv}as` body; nil for
    /// any other change.
    ///
    /// The sizes of the two arrays prove their shapes without walking them (libdbus steps over
    /// an entry by walking it): a dictionary whose one entry is `Value` holding n bytes is
    /// `valueEntrySize(n)` bytes long, and any other entry after it would make it longer; an
    /// empty `as` is 0 bytes long.
    private static func changedValue(_ message: borrowing DBusMessageReader) -> [UInt8]? {
        let value = try? message.withArguments { arguments throws(DBusDecodingError) -> [UInt8]? in
            guard try arguments.readString(equalTo: BlueZInterfaces.gattCharacteristic) else { return nil }
            let changed = try arguments.readArray { entries throws(DBusDecodingError) -> [UInt8]? in
                let value = try entries.readDictEntry { entry throws(DBusDecodingError) -> [UInt8]? in
                    guard try entry.readString(equalTo: "Value") else { return nil }
                    // Anything but an `ay` throws: the signal is then left to `handle`.
                    return try entry.readVariant { inner throws(DBusDecodingError) in try inner.readBytes() }
                }
                guard let value, entries.arrayByteCount == valueEntrySize(value.count) else { return nil }
                return value
            }
            guard let changed else { return nil }
            let nothingInvalidated = try arguments.readArray { invalidated throws(DBusDecodingError) in invalidated.arrayByteCount == 0 }
            return nothingInvalidated ? changed : nil
        }
        return value ?? nil
    }

    /// The size in the message of a `{sv}` entry `"Value"` → `ay` of `count` bytes: the key
    /// (length, 5 bytes, NUL: 10), the variant's signature (length, `ay`, NUL: 4), padding to 4
    /// (2), the array's length (4), then the bytes. The entry starts 8-aligned, where the
    /// array's size starts counting.
    private static func valueEntrySize(_ count: Int) -> Int { 20 + count }

    /// The value of a decoded `Value`-only change (one entry, `Value`, and nothing invalidated)
    /// of a mirrored characteristic, with where it goes; nil when the change is something else
    /// or the characteristic is unknown (then it takes the normal way: the mirror and `events`).
    /// Throws when `Value` is not an `ay`. Only signals the fast way did not take come here:
    /// those held during a snapshot and replayed.
    func characteristicValue(
        _ path: DBusObjectPath, _ interface: String, _ changed: [String: DBusValue], _ invalidated: [String]
    ) throws(DBusDecodingError) -> (route: CharacteristicRoute, bytes: [UInt8])? {
        guard interface == BlueZInterfaces.gattCharacteristic, changed.count == 1, invalidated.isEmpty,
            changed["Value"] != nil, let route = characteristicRoute(path),
            let bytes = try BlueZCharacteristic.value(in: changed)
        else { return nil }
        return (route, bytes)
    }

    private func characteristicRoute(of message: borrowing DBusMessageReader) -> CharacteristicRoute? {
        if let known = characteristicRoutes.value(forPathOf: message) { return known }
        guard let path = message.path else { return nil }
        return characteristicRoute(path)
    }

    /// The route of the characteristic at `path`, asking the value receivers where its values
    /// go on its first value; nil when the mirror does not hold it under a device.
    private func characteristicRoute(_ path: DBusObjectPath) -> CharacteristicRoute? {
        if let known = characteristicRoutes[path] { return known }
        // The same attribution as a `valueChanged` event's.
        guard let source = tree.characteristicSource(at: path) else { return nil }
        let route = CharacteristicRoute(receiver: valueReceivers?(source))
        characteristicRoutes[path] = route
        return route
    }
}
