import DBus

/// What a characteristic's values are attributed to, found in the mirror once per path.
struct CharacteristicOwner {
    let devicePath: DBusObjectPath
    let address: String?
    let addressType: String?
    let uuid: String
}

// Characteristic values for the value handler (`setValueHandler`), two ways: `claimValue` reads
// a notification in place before the connection decodes it (the way nearly every value takes);
// `characteristicValue` reads one that was decoded anyway (held during a snapshot and replayed,
// or of a shape the fast way leaves alone).
extension BlueZClient {
    /// Takes a signal whole when it is exactly what `handle` would pass to the value handler:
    /// from the current bluetoothd, newer than the snapshot, not held, a `PropertiesChanged`
    /// (`sa{sv}as`) of `GattCharacteristic1` whose only change is `Value`, an `ay`, with nothing
    /// invalidated, of a mirrored characteristic. Anything else (including what `handle` counts
    /// as malformed, such as a `Value` that is not an `ay`) is left to be decoded and handled as
    /// before. Called by the connection, on its thread, before decoding: see
    /// `DBusConnection.subscribe(matching:claim:onSignals:onEnd:)`.
    func claimValue(_ message: borrowing DBusMessageReader) -> Bool {
        guard let valueHandler, heldSignals == nil, let owner, message.serial > snapshotSerial, message.hasSender(owner),
            message.hasMember("PropertiesChanged", of: BlueZInterfaces.properties), message.hasSignature("sa{sv}as"),
            let bytes = Self.changedValue(message), let characteristic = characteristicOwner(of: message)
        else { return false }
        valueHandler(
            BlueZCharacteristicValue(
                devicePath: characteristic.devicePath, address: characteristic.address,
                addressType: characteristic.addressType, uuid: characteristic.uuid, bytes: bytes))
        return true
    }

    /// The bytes of a `Value`-only change of `GattCharacteristic1` in a `sa{sv}as` body; nil for
    /// any other change.
    private static func changedValue(_ message: borrowing DBusMessageReader) -> [UInt8]? {
        let value = try? message.withArguments { arguments throws(DBusDecodingError) -> [UInt8]? in
            guard try arguments.readString(equalTo: BlueZInterfaces.gattCharacteristic) else { return nil }
            let changed = try arguments.readArray { entries throws(DBusDecodingError) -> [UInt8]? in
                let value = try entries.readDictEntry { entry throws(DBusDecodingError) -> [UInt8]? in
                    guard try entry.readString(equalTo: "Value") else { return nil }
                    // Anything but an `ay` throws: the signal is then left to `handle`.
                    return try entry.readVariant { inner throws(DBusDecodingError) in try inner.readBytes() }
                }
                return entries.isAtEnd ? value : nil
            }
            let nothingInvalidated = try arguments.readArray { invalidated throws(DBusDecodingError) in invalidated.isAtEnd }
            return nothingInvalidated ? changed : nil
        }
        return value ?? nil
    }

    /// The value of a decoded `Value`-only change (`sa{sv}as` with one entry, `Value`, and
    /// nothing invalidated) of a mirrored characteristic, with its device; nil when the change
    /// is something else or the characteristic is unknown (then it takes the normal way). Reads
    /// the body in place: no dictionary is built for the one entry. Throws when `Value` is not
    /// an `ay`.
    func characteristicValue(_ path: DBusObjectPath, _ body: [DBusValue]) throws(DBusDecodingError) -> BlueZCharacteristicValue? {
        guard body.count == 3, case .string(BlueZInterfaces.gattCharacteristic) = body[0],
            case .dictionary(.string, .variant, let entries) = body[1], entries.count == 1,
            case .string("Value") = entries[0].key, case .variant(let raw) = entries[0].value,
            case .array(.string, let invalidated) = body[2], invalidated.isEmpty,
            let owner = characteristicOwner(path)
        else { return nil }
        return BlueZCharacteristicValue(
            devicePath: owner.devicePath, address: owner.address, addressType: owner.addressType, uuid: owner.uuid,
            bytes: try [UInt8](dbusValue: raw))
    }

    private func characteristicOwner(of message: borrowing DBusMessageReader) -> CharacteristicOwner? {
        if let known = characteristicOwners.value(forPathOf: message) { return known }
        guard let path = message.path else { return nil }
        return characteristicOwner(path)
    }

    private func characteristicOwner(_ path: DBusObjectPath) -> CharacteristicOwner? {
        if let known = characteristicOwners[path] { return known }
        guard case .string(let uuid)? = tree.objects[path]?[BlueZInterfaces.gattCharacteristic]?["UUID"] else { return nil }
        // …/dev_X/serviceNNNN/charNNNN: the device is the nearest ancestor with Device1.
        var candidate = path.parent
        while let current = candidate, tree.objects[current]?[BlueZInterfaces.device] == nil { candidate = current.parent }
        guard let devicePath = candidate, let device = tree.objects[devicePath]?[BlueZInterfaces.device] else { return nil }
        var address: String?
        var addressType: String?
        if case .string(let text)? = device["Address"] { address = text }
        if case .string(let text)? = device["AddressType"] { addressType = text }
        let owner = CharacteristicOwner(devicePath: devicePath, address: address, addressType: addressType, uuid: uuid.lowercased())
        characteristicOwners[path] = owner
        return owner
    }
}
