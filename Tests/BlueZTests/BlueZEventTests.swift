import BlueZ
import BluetoothVocabulary
import DBus
import Testing
import TestSupport

/// Each signal, applied to the mirror, says what changed as typed events: fed to the mirror
/// directly (every case, malformed signals included), then through the client from a stand-in
/// bluetoothd on a private bus.
@Suite("Typed BlueZ events from bluetoothd's signals")
struct BlueZEventTests {
    static let adapterPath = BlueZObjectTreeTests.adapterPath
    static let devicePath = BlueZObjectTreeTests.devicePath
    static let servicePath = BlueZObjectTreeTests.servicePath
    static let characteristicPath = BlueZObjectTreeTests.characteristicPath
    static let descriptorPath: DBusObjectPath = "/org/bluez/hci0/dev_AA_BB_CC_DD_EE_01/service000c/char000d/desc000f"
    static let heartRate = "00002a37-0000-1000-8000-00805f9b34fb"

    static func snapshot() throws -> BlueZObjectTree {
        try BlueZObjectTree(managedObjects: BlueZObjectTreeTests.managedObjects())
    }

    static let id = DeviceID(bluezAddress: "AA:BB:CC:DD:EE:01", addressType: "random")

    // MARK: - Feeding the mirror

    @Test func objectsAddedAreAnnouncedAsTheMirrorHoldsThem() throws {
        var tree = BlueZObjectTree()
        let adapter = tree.apply(interfacesAdded: Self.adapterPath, [
            "org.bluez.Adapter1": ["Address": .string("00:11:22:33:44:55"), "Powered": .boolean(true)],
            "org.freedesktop.DBus.Properties": [:],
        ])
        #expect(adapter == [.adapterAdded(try #require(tree.adapter(at: Self.adapterPath)))])
        #expect(tree.adapter(at: Self.adapterPath)?.powered == true)

        let device = tree.apply(interfacesAdded: Self.devicePath, [
            "org.bluez.Device1": ["Address": .string("AA:BB:CC:DD:EE:01"), "AddressType": .string("random"), "Connected": .boolean(true)],
        ])
        let view = try #require(tree.device(at: Self.devicePath))
        #expect(device == [.deviceAdded(view)])
        #expect(view.identity != nil && view.identity == Self.id && view.connected)

        #expect(tree.apply(interfacesAdded: Self.servicePath, ["org.bluez.GattService1": ["UUID": .string("180d")]])
            == [.gattObjectAdded(Self.servicePath, .service)])
        #expect(tree.apply(interfacesAdded: Self.characteristicPath, ["org.bluez.GattCharacteristic1": ["UUID": .string(Self.heartRate)]])
            == [.gattObjectAdded(Self.characteristicPath, .characteristic)])
        #expect(tree.apply(interfacesAdded: Self.descriptorPath, ["org.bluez.GattDescriptor1": ["UUID": .string("2902")]])
            == [.gattObjectAdded(Self.descriptorPath, .descriptor)])
        #expect(tree.apply(interfacesAdded: "/org/bluez", ["org.bluez.AgentManager1": [:]]).isEmpty, "an interface the mirror does not keep")
    }

    @Test func objectsRemovedAreAnnouncedWithTheIdentityTheyHad() throws {
        var tree = try Self.snapshot()
        #expect(tree.apply(interfacesRemoved: Self.characteristicPath, ["org.bluez.GattCharacteristic1"])
            == [.gattObjectRemoved(Self.characteristicPath, .characteristic)])
        #expect(tree.apply(interfacesRemoved: Self.servicePath, ["org.bluez.GattService1"]) == [.gattObjectRemoved(Self.servicePath, .service)])
        #expect(tree.apply(interfacesRemoved: Self.devicePath, ["org.bluez.Device1", "org.freedesktop.DBus.Properties"])
            == [.deviceRemoved(Self.devicePath, Self.id)])
        #expect(tree.device(at: Self.devicePath) == nil)
        #expect(tree.apply(interfacesRemoved: Self.devicePath, ["org.bluez.Device1"]).isEmpty, "nothing the mirror held")
        #expect(tree.apply(interfacesRemoved: Self.adapterPath, ["org.bluez.Adapter1"]) == [.adapterRemoved(AdapterID("hci0"))])
        #expect(tree.adapters.isEmpty)
    }

    @Test func adapterPowerChangesAreTyped() throws {
        var tree = try Self.snapshot()
        let off = try tree.apply(propertiesChanged: Self.adapterPath, interface: "org.bluez.Adapter1", changed: ["Powered": .boolean(false)], invalidated: [])
        #expect(off == [.adapterPowerChanged(AdapterID("hci0"), powered: false)])
        #expect(tree.adapter(at: Self.adapterPath)?.powered == false)
        let discovering = try tree.apply(
            propertiesChanged: Self.adapterPath, interface: "org.bluez.Adapter1", changed: ["Discovering": .boolean(true)], invalidated: [])
        #expect(discovering == [], "a change no event describes is applied without one")
        #expect(tree.adapter(at: Self.adapterPath)?.discovering == true)
    }

    @Test func deviceChangesAreTypedInDeclarationOrder() throws {
        var tree = try Self.snapshot()
        func change(_ changed: [String: DBusValue], invalidated: [String] = []) throws -> [BlueZEvent]? {
            try tree.apply(propertiesChanged: Self.devicePath, interface: "org.bluez.Device1", changed: changed, invalidated: invalidated)
        }
        #expect(try change(["Connected": .boolean(true)]) == [.deviceConnectionChanged(Self.devicePath, connected: true)])
        #expect(try change(["ServicesResolved": .boolean(true), "UUIDs": .stringArray(["180D"]), "RSSI": .int16(-40), "Connected": .boolean(true)]) == [
            .deviceConnectionChanged(Self.devicePath, connected: true),
            .servicesResolvedChanged(Self.devicePath, resolved: true),
            .deviceUpdated(Self.devicePath, [.rssi, .uuids]),
        ])
        #expect(tree.device(at: Self.devicePath)?.rssi == -40)
        #expect(tree.device(at: Self.devicePath)?.servicesResolved == true)
        #expect(try change(["Name": .string("Strap"), "Alias": .string("Chest strap")]) == [.deviceUpdated(Self.devicePath, [.name, .alias])])
        #expect(try change(["Paired": .boolean(true), "Bonded": .boolean(true), "Trusted": .boolean(true), "Blocked": .boolean(false), "TxPower": .int16(4)])
            == [.deviceUpdated(Self.devicePath, [.paired, .bonded, .trusted, .blocked, .txPower])])
        #expect(try change([:], invalidated: ["RSSI"]) == [], "an invalidated property is not reported")
        #expect(tree.device(at: Self.devicePath)?.rssi == nil)
        #expect(try change(["ServicesResolved": .boolean(false), "Connected": .boolean(false)]) == [
            .deviceConnectionChanged(Self.devicePath, connected: false),
            .servicesResolvedChanged(Self.devicePath, resolved: false),
        ])
        #expect(try change(["ManufacturerData": .stringVariantMap([:])]) == [])
        #expect(try tree.apply(propertiesChanged: "/org/bluez/hci0/dev_00_00_00_00_00_09", interface: "org.bluez.Device1",
                               changed: ["Connected": .boolean(true)], invalidated: []) == nil, "an object the mirror does not hold")
        #expect(tree.device(at: "/org/bluez/hci0/dev_00_00_00_00_00_09") == nil)
    }

    @Test func characteristicValuesAreParsedOnceWithTheirAttribution() throws {
        var tree = try Self.snapshot()
        let source = try #require(tree.characteristicSource(at: Self.characteristicPath))
        #expect(source.characteristicPath == Self.characteristicPath)
        #expect(source.devicePath == Self.devicePath)
        #expect(source.deviceIdentity == Self.id)
        #expect(source.uuid == Self.heartRate)
        let value = try tree.apply(
            propertiesChanged: Self.characteristicPath, interface: "org.bluez.GattCharacteristic1",
            changed: ["Value": .bytes([0x06, 72])], invalidated: [])
        #expect(value == [.valueChanged(source, bytes: [0x06, 72])])
        #expect(tree.objects[Self.characteristicPath]?["org.bluez.GattCharacteristic1"]?["Value"] == .bytes([0x06, 72]))
        let both = try tree.apply(
            propertiesChanged: Self.characteristicPath, interface: "org.bluez.GattCharacteristic1",
            changed: ["Value": .bytes([]), "Notifying": .boolean(true)], invalidated: [])
        #expect(both == [.notifyingChanged(Self.characteristicPath, notifying: true), .valueChanged(source, bytes: [])])
        #expect(tree.characteristics(of: Self.devicePath).first?.notifying == true)
        #expect(tree.characteristicSource(at: Self.servicePath) == nil, "not a characteristic")
    }

    @Test func aKnownPropertyOfTheWrongTypeIsMalformedAndChangesNothing() throws {
        var tree = try Self.snapshot()
        let before = tree.objects
        let wrong: [(DBusObjectPath, String, [String: DBusValue])] = [
            (Self.adapterPath, "org.bluez.Adapter1", ["Powered": .string("yes")]),
            (Self.devicePath, "org.bluez.Device1", ["Connected": .uint32(1)]),
            (Self.devicePath, "org.bluez.Device1", ["RSSI": .int32(-40), "Name": .string("Strap")]),
            (Self.devicePath, "org.bluez.Device1", ["UUIDs": .string("180d")]),
            (Self.characteristicPath, "org.bluez.GattCharacteristic1", ["Value": .string("72 bpm")]),
            (Self.characteristicPath, "org.bluez.GattCharacteristic1", ["Value": .array(element: .int32, [.int32(1)])]),
            (Self.characteristicPath, "org.bluez.GattCharacteristic1", ["Notifying": .byte(1), "Value": .bytes([1])]),
        ]
        for (path, interface, changed) in wrong {
            #expect(throws: DBusDecodingError.self, "\(changed)") {
                try tree.apply(propertiesChanged: path, interface: interface, changed: changed, invalidated: [])
            }
        }
        #expect(tree.objects == before)
    }

    // MARK: - Through the client

    @Test func theClientReportsEachSignalAsItsTypedEvent() async throws {
        let fixture = try await CharacteristicFixture.start(notifying: false)
        let (bluetoothd, device, characteristic) = (fixture.bluetoothd, fixture.device, fixture.characteristic)
        let client = BlueZClient(connection: fixture.connection)
        try await client.start()
        let events = client.events
        let fake = bluetoothd.connection
        let adapter = AdapterID("hci0")
        let id = try #require(DeviceID(bluezAddress: "AA:BB:CC:DD:EE:00", addressType: nil))
        let source = try #require(await client.tree.characteristicSource(at: characteristic))
        let second: DBusObjectPath = "/org/bluez/hci1"
        let descriptor = try characteristic.appending("desc000c")

        try await fake.setProperty("Powered", to: .boolean(false), of: "org.bluez.Adapter1", at: FakeBluetoothd.adapterPath)
        try await fake.setProperty("Connected", to: .boolean(true), of: "org.bluez.Device1", at: device)
        try await fake.emitSignal(
            path: device, interface: "org.freedesktop.DBus.Properties", member: "PropertiesChanged",
            [.string("org.bluez.Device1"), .stringVariantMap(["ServicesResolved": .boolean(true), "UUIDs": .stringArray(["180d"])]), .stringArray([])])
        try await fake.setProperty("RSSI", to: .int16(-48), of: "org.bluez.Device1", at: device)
        try await fake.setProperty("Value", to: .bytes([0x06, 70]), of: "org.bluez.GattCharacteristic1", at: characteristic)
        try await fake.setProperty("Notifying", to: .boolean(true), of: "org.bluez.GattCharacteristic1", at: characteristic)
        try await fake.export(DBusInterface("org.bluez.GattDescriptor1", properties: [DBusProperty("UUID", .string)]), properties: ["UUID": .string("2902")], at: descriptor)
        try await fake.unexport(descriptor)
        // A `Connected` that is not a boolean: malformed, counted, not applied.
        try await fake.emitSignal(
            path: device, interface: "org.freedesktop.DBus.Properties", member: "PropertiesChanged",
            [.string("org.bluez.Device1"), .stringVariantMap(["Connected": .string("no")]), .stringArray([])])
        try await fake.emitSignal(
            path: device, interface: "org.bluez.Device1", member: "Disconnected",
            [.string("org.bluez.Reason.Remote"), .string("Connection terminated by remote")])
        try await fake.export(FakeBluetoothd.adapterInterface, properties: ["Address": .string("00:11:22:33:44:66"), "Powered": .boolean(true)], at: second)
        try await fake.unexport(second)
        try await fake.unexport(device)

        let seen = try await withTimeout(.seconds(10), "every event") {
            var seen: [BlueZEvent] = []
            for await event in events {
                if case .appeared = event { continue }  // the start, before these signals
                seen.append(event)
                if case .deviceRemoved = event { break }
            }
            return seen
        }
        guard seen.count == 14, case .malformedSignal(let text) = seen[9], case .adapterAdded(let added) = seen[11] else {
            Issue.record("unexpected events: \(seen)")
            return
        }
        #expect(Array(seen[..<9]) == [
            .adapterPowerChanged(adapter, powered: false),
            .deviceConnectionChanged(device, connected: true),
            .servicesResolvedChanged(device, resolved: true),
            .deviceUpdated(device, .uuids),
            .deviceUpdated(device, .rssi),
            .valueChanged(source, bytes: [0x06, 70]),
            .notifyingChanged(characteristic, notifying: true),
            .gattObjectAdded(descriptor, .descriptor),
            .gattObjectRemoved(descriptor, .descriptor),
        ])
        #expect(text.contains("Connected"))
        #expect(seen[10] == .deviceDisconnected(device, reason: "org.bluez.Reason.Remote", message: "Connection terminated by remote"))
        #expect(added.path == second && added.name == "hci1" && added.powered && added.address == "00:11:22:33:44:66")
        #expect(Array(seen[12...]) == [.adapterRemoved(AdapterID("hci1")), .deviceRemoved(device, id)])
        #expect(await client.malformedSignals == 1)
        await client.stop()
        await fixture.close()
    }

    @Test func signalsAlreadyInTheSnapshotAreSkippedAndLaterOnesApplied() async throws {
        let bus = try PrivateBus()
        let connection = try await DBusConnection.connect(to: .address(bus.address), threadName: "fake-bluez")
        let device = FakeBluetoothd.devicePath(1)
        let snapshot: [DBusObjectPath: [String: [String: DBusValue]]] = [
            FakeBluetoothd.adapterPath: ["org.bluez.Adapter1": ["Powered": .boolean(true)]],
            device: ["org.bluez.Device1": ["Address": .string("AA:BB:CC:DD:EE:01"), "Connected": .boolean(false)]],
        ]
        @Sendable func connected(_ connected: Bool) async throws {
            try await connection.emitSignal(
                path: device, interface: "org.freedesktop.DBus.Properties", member: "PropertiesChanged",
                [.string("org.bluez.Device1"), .stringVariantMap(["Connected": .boolean(connected)]), .stringArray([])])
        }
        let manager = DBusInterface("org.freedesktop.DBus.ObjectManager", methods: [
            DBusMethod("GetManagedObjects", outputs: [DBusArgument("objects", .dictionary(key: .objectPath, value: .dictionary(key: .string, value: .dictionary(key: .string, value: .variant))))], handler: .async { _ in
                // Sent before the reply, so its serial is lower: the snapshot already has it
                // (and here, to tell, the snapshot says otherwise).
                try await connected(true)
                return [snapshot.dbusValue]
            }),
        ])
        try await connection.export(manager, at: .root)
        _ = try await connection.call(
            destination: "org.freedesktop.DBus", path: "/org/freedesktop/DBus", interface: "org.freedesktop.DBus",
            member: "RequestName", [.string("org.bluez"), .uint32(4)])
        let client = BlueZClient(connection: try await DBusConnection.connect(to: .address(bus.address)))
        try await client.start()
        let events = client.events
        #expect(await client.tree.device(at: device)?.connected == false, "the signal older than the snapshot was skipped")

        try await connected(true)
        let seen = try await withTimeout(.seconds(5), "the later change") {
            var seen: [BlueZEvent] = []
            for await event in events {
                seen.append(event)
                if case .deviceConnectionChanged = event { break }
            }
            return seen
        }
        guard case .appeared(_, _, let devices) = seen.first else {
            Issue.record("no appeared event first: \(seen)")
            return
        }
        #expect(devices.map(\.connected) == [false])
        #expect(Array(seen.dropFirst()) == [.deviceConnectionChanged(device, connected: true)])
        #expect(await client.tree.device(at: device)?.connected == true)
        #expect(await client.malformedSignals == 0)
        await client.stop()
        await connection.close()
    }
}
