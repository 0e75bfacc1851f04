import BluetoothVocabulary
import DBus

// Applying bluetoothd's signals to the mirror and saying, typed, what changed: the one place a
// signal's variant dictionaries are parsed into `BlueZEvent`s. `BlueZClient.handle` calls these
// with the decoded bodies; tests feed them directly.
extension BlueZObjectTree {
    /// Applies an `InterfacesAdded` and returns what appeared: the adapter, the device, then
    /// the GATT object (each as the mirror now holds it).
    public mutating func apply(interfacesAdded path: DBusObjectPath, _ interfaces: [String: [String: DBusValue]]) -> [BlueZEvent] {
        interfacesAdded(path, interfaces)
        var events: [BlueZEvent] = []
        if interfaces[BlueZInterfaces.adapter] != nil, let adapter = adapter(at: path) {
            events.append(.adapterAdded(adapter))
        }
        if interfaces[BlueZInterfaces.device] != nil, let device = device(at: path) {
            events.append(.deviceAdded(device))
        }
        for kind in BlueZGATTObjectKind.allCases where interfaces[kind.interface] != nil {
            events.append(.gattObjectAdded(path, kind))
        }
        return events
    }

    /// Applies an `InterfacesRemoved` and returns what went away (of what the mirror held): the
    /// device (with the identity it had), the adapter, then the GATT object.
    public mutating func apply(interfacesRemoved path: DBusObjectPath, _ names: [String]) -> [BlueZEvent] {
        let held = objects[path] ?? [:]
        let removedDevice = names.contains(BlueZInterfaces.device) ? device(at: path) : nil
        interfacesRemoved(path, names)
        var events: [BlueZEvent] = []
        if let removedDevice { events.append(.deviceRemoved(path, removedDevice.identity)) }
        if names.contains(BlueZInterfaces.adapter), held[BlueZInterfaces.adapter] != nil {
            events.append(.adapterRemoved(AdapterID(path.lastElement)))
        }
        for kind in BlueZGATTObjectKind.allCases where names.contains(kind.interface) && held[kind.interface] != nil {
            events.append(.gattObjectRemoved(path, kind))
        }
        return events
    }

    /// Parses a `PropertiesChanged` of a mirrored object's interface, applies it and returns what
    /// changed (possibly nothing an event describes). Returns nil, changing nothing, for an
    /// object or interface the mirror does not hold (rather than creating half an object).
    /// Throws, changing nothing, when a property the events report has the wrong type: the
    /// signal is malformed.
    public mutating func apply(
        propertiesChanged path: DBusObjectPath, interface: String, changed: [String: DBusValue], invalidated: [String]
    ) throws(DBusDecodingError) -> [BlueZEvent]? {
        guard objects[path]?[interface] != nil else { return nil }
        // Parse everything first, so that a malformed signal leaves the mirror as it was.
        var events: [BlueZEvent] = []
        switch interface {
        case BlueZInterfaces.adapter:
            // One event from the adapter as the mirror has it once the change is applied
            // (`BlueZAdapter.powered`: `Powered`, and `PowerState` "on" where bluetoothd has it),
            // whichever of the two the signal carries: `PowerState` (BlueZ ≥ 5.66) says
            // "on-disabling" as soon as a power-off is asked for, before the kernel ends the
            // adapter's links and long before `Powered` turns false, so the adapter is off from
            // then on (no new attempt starts on it, and the links it loses are lost to the
            // power-off); "on" again means a power-off that failed was taken back.
            let powered = try changed.decodeIfPresent(Bool.self, forKey: "Powered")
            let state = try changed.decodeIfPresent(String.self, forKey: "PowerState")
            if powered != nil || state != nil {
                propertiesChanged(path, interface: interface, changed: changed, invalidated: invalidated)
                return [.adapterPowerChanged(AdapterID(path.lastElement), powered: adapter(at: path)?.powered ?? false)]
            }
        case BlueZInterfaces.device:
            events = try Self.deviceEvents(path, changed)
        case BlueZInterfaces.gattCharacteristic:
            if let notifying = try changed.decodeIfPresent(Bool.self, forKey: "Notifying") {
                events.append(.notifyingChanged(path, notifying: notifying))
            }
            if let bytes = try BlueZCharacteristic.value(in: changed), let source = characteristicSource(at: path) {
                events.append(.valueChanged(source, bytes: bytes))
            }
        default:
            break
        }
        propertiesChanged(path, interface: interface, changed: changed, invalidated: invalidated)
        return events
    }

    /// The events of a `Device1` change, in the order `BlueZEvent` declares them.
    private static func deviceEvents(_ path: DBusObjectPath, _ changed: [String: DBusValue]) throws(DBusDecodingError) -> [BlueZEvent] {
        var events: [BlueZEvent] = []
        if let connected = try changed.decodeIfPresent(Bool.self, forKey: "Connected") {
            events.append(.deviceConnectionChanged(path, connected: connected))
        }
        if let resolved = try changed.decodeIfPresent(Bool.self, forKey: "ServicesResolved") {
            events.append(.servicesResolvedChanged(path, resolved: resolved))
        }
        var fields: BlueZDeviceFields = []
        if try changed.decodeIfPresent(Int16.self, forKey: "RSSI") != nil { fields.insert(.rssi) }
        if try changed.decodeIfPresent(Int16.self, forKey: "TxPower") != nil { fields.insert(.txPower) }
        if try changed.decodeIfPresent(String.self, forKey: "Name") != nil { fields.insert(.name) }
        if try changed.decodeIfPresent(String.self, forKey: "Alias") != nil { fields.insert(.alias) }
        if try changed.decodeIfPresent([String].self, forKey: "UUIDs") != nil { fields.insert(.uuids) }
        if try changed.decodeIfPresent(Bool.self, forKey: "Paired") != nil { fields.insert(.paired) }
        if try changed.decodeIfPresent(Bool.self, forKey: "Bonded") != nil { fields.insert(.bonded) }
        if try changed.decodeIfPresent(Bool.self, forKey: "Trusted") != nil { fields.insert(.trusted) }
        if try changed.decodeIfPresent(Bool.self, forKey: "Blocked") != nil { fields.insert(.blocked) }
        if !fields.isEmpty { events.append(.deviceUpdated(path, fields)) }
        return events
    }

    /// The characteristic at `path` with what its values are attributed by: its UUID, and the
    /// device it belongs to (the nearest ancestor with `Device1`: `…/dev_X/serviceNNNN/charNNNN`)
    /// with that device's address. Nil when the mirror does not hold it, with a UUID, under a
    /// device.
    public func characteristicSource(at path: DBusObjectPath) -> BlueZCharacteristicSource? {
        guard case .string(let uuid)? = objects[path]?[BlueZInterfaces.gattCharacteristic]?["UUID"] else { return nil }
        var candidate = path.parent
        while let current = candidate, objects[current]?[BlueZInterfaces.device] == nil { candidate = current.parent }
        guard let devicePath = candidate, let device = objects[devicePath]?[BlueZInterfaces.device] else { return nil }
        var address: String?
        var addressType: String?
        if case .string(let text)? = device["Address"] { address = text }
        if case .string(let text)? = device["AddressType"] { addressType = text }
        return BlueZCharacteristicSource(
            characteristicPath: path, devicePath: devicePath, address: address, addressType: addressType, uuid: uuid.lowercased())
    }
}

extension BlueZCharacteristic {
    /// The bytes of `Value` in a decoded change of a characteristic's properties (nil without
    /// one): the one parse of a characteristic value from a decoded signal, for its event
    /// (`BlueZObjectTree.apply(propertiesChanged:…)`) and for the client's value receivers alike.
    /// Throws when `Value` is not an `ay`.
    ///
    /// The value fast path (`BlueZClient.claimValue`) does not come here: it reads the bytes
    /// from the message in place, before the connection decodes it, and a `DBusValue` built to
    /// share this would be the very allocation per notification that path exists to avoid.
    static func value(in changed: [String: DBusValue]) throws(DBusDecodingError) -> [UInt8]? {
        try changed.decodeIfPresent([UInt8].self, forKey: "Value")
    }
}
