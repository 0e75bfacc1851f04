import DBus
import GATT

// The D-Bus interfaces bluetoothd exports, as its documentation names and types them. Handlers
// only decode arguments and forward to the actor.

extension BlueZSimulator {
    static let adapterInterfaceName = "org.bluez.Adapter1"
    static let deviceInterfaceName = "org.bluez.Device1"
    static let serviceInterfaceName = "org.bluez.GattService1"
    static let characteristicInterfaceName = "org.bluez.GattCharacteristic1"
    static let descriptorInterfaceName = "org.bluez.GattDescriptor1"

    // MARK: - /org/bluez

    static func profileManagerInterface() -> DBusInterface {
        DBusInterface(
            "org.bluez.ProfileManager1",
            methods: [
                DBusMethod(
                    "RegisterProfile",
                    inputs: [.init("profile", .objectPath), .init("uuid", .string), .init("options", .dictionary(key: .string, value: .variant))],
                    handler: .sync { _ in [] }),
                DBusMethod("UnregisterProfile", inputs: [.init("profile", .objectPath)], handler: .sync { _ in [] }),
            ])
    }

    // MARK: - Adapter1

    /// `ConnectDevice` is experimental in BlueZ (`GDBUS_EXPERIMENTAL_ASYNC_METHOD` in
    /// `src/adapter.c`): without `--experimental`, gdbus leaves the call unhandled and the bus
    /// library answers `org.freedesktop.DBus.Error.UnknownMethod`; it is not introspected either.
    func adapterInterface(_ name: String) -> DBusInterface {
        let options = DBusType.dictionary(key: .string, value: .variant)
        var experimental: [DBusMethod] = []
        if settings.experimentalEnabled {
            experimental.append(
                DBusMethod(
                    "ConnectDevice", inputs: [.init("properties", options)], outputs: [.init("device", .objectPath)],
                    handler: .async { call in
                        let properties = try call.body.decode([String: DBusValue].self, at: 0)
                        return [.objectPath(try await self.connectDevice(adapter: name, properties: properties))]
                    }))
        }
        return DBusInterface(
            Self.adapterInterfaceName,
            methods: experimental + [
                DBusMethod("StartDiscovery", handler: .async { call in
                    try await self.startDiscovery(adapter: name, client: call.sender)
                    return []
                }),
                DBusMethod("StopDiscovery", handler: .async { call in
                    try await self.stopDiscovery(adapter: name, client: call.sender)
                    return []
                }),
                DBusMethod("SetDiscoveryFilter", inputs: [.init("filter", options)], handler: .async { call in
                    let filter = try call.body.decode([String: DBusValue].self, at: 0)
                    try await self.setDiscoveryFilter(adapter: name, client: call.sender, filter: filter)
                    return []
                }),
                DBusMethod("GetDiscoveryFilters", outputs: [.init("filters", .array(.string))], handler: .sync { _ in
                    [.stringArray(["UUIDs", "RSSI", "Pathloss", "Transport", "DuplicateData", "Discoverable", "Pattern"])]
                }),
                DBusMethod("RemoveDevice", inputs: [.init("device", .objectPath)], handler: .async { call in
                    try await self.removeDevice(adapter: name, path: try call.body.decode(DBusObjectPath.self, at: 0))
                    return []
                }),
            ],
            properties: [
                DBusProperty("Address", .string), DBusProperty("AddressType", .string), DBusProperty("Name", .string),
                DBusProperty("Alias", .string, access: .readwrite), DBusProperty("Class", .uint32),
                DBusProperty("Powered", .boolean, access: .readwrite), DBusProperty("PowerState", .string),
                DBusProperty("Discoverable", .boolean, access: .readwrite),
                DBusProperty("DiscoverableTimeout", .uint32, access: .readwrite),
                DBusProperty("Pairable", .boolean, access: .readwrite), DBusProperty("PairableTimeout", .uint32, access: .readwrite),
                DBusProperty("Discovering", .boolean), DBusProperty("UUIDs", .array(.string)), DBusProperty("Modalias", .string),
                DBusProperty("Roles", .array(.string)),
            ],
            willSet: { _, property, value in
                // Powering is applied by the actor after the value is stored (links drop,
                // discovery stops); the hook only schedules it.
                if property == "Powered", case .boolean(let powered) = value {
                    Task { await self.setAdapterPowered(name, powered) }
                }
            })
    }

    func adapterProperties(_ adapter: SimulatedAdapter) -> [String: DBusValue] {
        [
            "Address": .string(adapter.configuration.address), "AddressType": .string("public"),
            "Name": .string("wearfleet-gateway"), "Alias": .string("wearfleet-gateway #\(adapter.configuration.name.dropFirst(3))"),
            "Class": .uint32(0x6C_0000), "Powered": .boolean(adapter.powered), "PowerState": .string(adapter.powered ? "on" : "off"),
            "Discoverable": .boolean(false), "DiscoverableTimeout": .uint32(180), "Pairable": .boolean(true),
            "PairableTimeout": .uint32(0), "Discovering": .boolean(!adapter.discoveryClients.isEmpty),
            "UUIDs": .stringArray([
                "00001800-0000-1000-8000-00805f9b34fb", "00001801-0000-1000-8000-00805f9b34fb",
                "0000180a-0000-1000-8000-00805f9b34fb",
            ]),
            "Modalias": .string("usb:v1D6Bp0246d0548"), "Roles": .stringArray(["central", "peripheral"]),
        ]
    }

    // MARK: - Device1

    /// `adapter`'s Device1 object for the device: its calls act through that adapter.
    func deviceInterface(_ address: String, adapter: String) -> DBusInterface {
        DBusInterface(
            Self.deviceInterfaceName,
            methods: [
                DBusMethod("Connect", handler: .async { _ in
                    try await self.connect(address, adapter: adapter)
                    return []
                }),
                DBusMethod("Disconnect", handler: .async { _ in
                    try await self.disconnect(address, adapter: adapter)
                    return []
                }),
                DBusMethod("ConnectProfile", inputs: [.init("UUID", .string)], handler: .async { call in
                    try await self.connectProfile(address, adapter: adapter, uuid: try call.body.decode(String.self, at: 0))
                    return []
                }),
                DBusMethod("DisconnectProfile", inputs: [.init("UUID", .string)], handler: .async { _ in
                    try await self.disconnect(address, adapter: adapter)
                    return []
                }),
                DBusMethod("Pair", handler: .async { call in
                    try await self.pair(address, adapter: adapter, caller: call.sender)
                    return []
                }),
                DBusMethod("CancelPairing", handler: .sync { _ in throw BlueZError.doesNotExist() }),
            ],
            properties: [
                DBusProperty("Address", .string), DBusProperty("AddressType", .string), DBusProperty("Name", .string),
                DBusProperty("Alias", .string, access: .readwrite), DBusProperty("Appearance", .uint16),
                DBusProperty("Icon", .string), DBusProperty("Paired", .boolean), DBusProperty("Bonded", .boolean),
                DBusProperty("Trusted", .boolean, access: .readwrite), DBusProperty("Blocked", .boolean, access: .readwrite),
                DBusProperty("LegacyPairing", .boolean), DBusProperty("RSSI", .int16), DBusProperty("TxPower", .int16),
                DBusProperty("Connected", .boolean), DBusProperty("UUIDs", .array(.string)), DBusProperty("Adapter", .objectPath),
                DBusProperty("ManufacturerData", .dictionary(key: .uint16, value: .variant)),
                DBusProperty("ServiceData", .dictionary(key: .string, value: .variant)),
                DBusProperty("ServicesResolved", .boolean), DBusProperty("AdvertisingFlags", .array(.byte)),
            ],
            signals: [DBusSignal("Disconnected", arguments: [.init("reason", .string), .init("message", .string)])],
            willSet: { _, property, value in
                if property == "Blocked", case .boolean(true) = value {
                    Task { try? await self.disconnect(address, adapter: adapter) }
                }
            })
    }

    /// The properties of `adapter`'s object for the device: its own RSSI and pairing, and the
    /// link only when it goes through this adapter.
    func deviceProperties(_ device: SimulatedDevice, on adapter: String, withRSSI: Bool) -> [String: DBusValue] {
        let config = device.configuration
        let object = device.objects[adapter]
        let linked = device.isLinked(through: adapter)
        let appearance: UInt16
        let icon: String
        switch config.kind {
        case .heartRateStrap: (appearance, icon) = (0x0341, "unknown")
        case .watch: (appearance, icon) = (0x00C2, "unknown")
        case .motionBand: (appearance, icon) = (0x0540, "unknown")
        // Generic Blood Pressure (category 14) and Generic Weight Scale (category 50).
        case .bloodPressureCuff: (appearance, icon) = (0x0380, "unknown")
        case .weightScale: (appearance, icon) = (0x0C80, "unknown")
        }
        var properties: [String: DBusValue] = [
            "Address": .string(config.address), "AddressType": .string(config.addressType), "Name": .string(config.name),
            "Alias": .string(config.name), "Appearance": .uint16(appearance), "Icon": .string(icon),
            "Paired": .boolean(object?.paired ?? false), "Bonded": .boolean(object?.bonded ?? false), "Trusted": .boolean(false),
            "Blocked": .boolean(false), "LegacyPairing": .boolean(false), "Connected": .boolean(linked),
            "UUIDs": .stringArray(linked && device.link == .resolved ? device.resolvedUUIDs : device.advertisedUUIDs),
            "Adapter": .objectPath(object?.adapterPath ?? .root), "ServicesResolved": .boolean(linked && device.link == .resolved),
            "TxPower": .int16(Int16(clamping: config.txPower)), "AdvertisingFlags": .bytes([0x06]),
            // 0xFFFF is the company identifier reserved for tests and prototypes.
            "ManufacturerData": .dictionary(
                key: .uint16, value: .variant,
                [DBusDictEntry(key: .uint16(0xFFFF), value: .variant(.bytes([0x57, 0x46, UInt8(WearableKind.allCases.firstIndex(of: config.kind) ?? 0)])))]),
            "ServiceData": .dictionary(key: .string, value: .variant, []),
        ]
        if config.kind == .motionBand {
            properties["ServiceData"] = .dictionary(
                key: .string, value: .variant,
                [DBusDictEntry(key: .string(BluetoothUUID.motionBandService.description), value: .variant(.bytes([0x01, 87])))])
        }
        if withRSSI, let object { properties["RSSI"] = .int16(object.rssi) }
        return properties
    }

    // MARK: - GATT

    static func serviceInterface() -> DBusInterface {
        DBusInterface(
            serviceInterfaceName,
            properties: [
                DBusProperty("UUID", .string), DBusProperty("Device", .objectPath), DBusProperty("Primary", .boolean),
                DBusProperty("Includes", .array(.objectPath)), DBusProperty("Handle", .uint16),
            ])
    }

    func characteristicInterface(_ address: String, _ path: DBusObjectPath) -> DBusInterface {
        let options = DBusType.dictionary(key: .string, value: .variant)
        return DBusInterface(
            Self.characteristicInterfaceName,
            methods: [
                DBusMethod("ReadValue", inputs: [.init("options", options)], outputs: [.init("value", .array(.byte))], handler: .async { call in
                    let options = try call.body.decode([String: DBusValue].self, at: 0)
                    return [.bytes(try await self.readValue(address, path, options: options))]
                }),
                DBusMethod("WriteValue", inputs: [.init("value", .array(.byte)), .init("options", options)], handler: .async { call in
                    let value = try call.body.decode([UInt8].self, at: 0)
                    let options = try call.body.decode([String: DBusValue].self, at: 1)
                    try await self.writeValue(address, path, value, options: options)
                    return []
                }),
                DBusMethod(
                    "AcquireWrite", inputs: [.init("options", options)], outputs: [.init("fd", .unixFD), .init("mtu", .uint16)],
                    handler: .async { _ in try await self.acquireWrite(address, path) }),
                DBusMethod(
                    "AcquireNotify", inputs: [.init("options", options)], outputs: [.init("fd", .unixFD), .init("mtu", .uint16)],
                    handler: .async { _ in try await self.acquireNotify(address, path) }),
                DBusMethod("StartNotify", handler: .async { call in
                    try await self.startNotify(address, path, client: call.sender)
                    return []
                }),
                DBusMethod("StopNotify", handler: .async { call in
                    try await self.stopNotify(address, path, client: call.sender)
                    return []
                }),
            ],
            properties: [
                DBusProperty("UUID", .string), DBusProperty("Service", .objectPath), DBusProperty("Value", .array(.byte)),
                DBusProperty("Notifying", .boolean), DBusProperty("Flags", .array(.string)), DBusProperty("Handle", .uint16),
                DBusProperty("MTU", .uint16), DBusProperty("NotifyAcquired", .boolean), DBusProperty("WriteAcquired", .boolean),
            ])
    }

    func descriptorInterface(_ address: String, _ path: DBusObjectPath) -> DBusInterface {
        let options = DBusType.dictionary(key: .string, value: .variant)
        return DBusInterface(
            Self.descriptorInterfaceName,
            methods: [
                DBusMethod("ReadValue", inputs: [.init("options", options)], outputs: [.init("value", .array(.byte))], handler: .async { _ in
                    [.bytes(try await self.readDescriptor(address, path))]
                }),
                DBusMethod("WriteValue", inputs: [.init("value", .array(.byte)), .init("options", options)], handler: .sync { _ in
                    // BlueZ owns the CCC descriptor: clients enable notifications with StartNotify.
                    throw BlueZError.notPermitted("Write not permitted")
                }),
            ],
            properties: [
                DBusProperty("UUID", .string), DBusProperty("Characteristic", .objectPath), DBusProperty("Value", .array(.byte)),
                DBusProperty("Flags", .array(.string)), DBusProperty("Handle", .uint16),
            ])
    }
}
