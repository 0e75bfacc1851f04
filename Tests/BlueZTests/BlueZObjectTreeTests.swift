import BlueZ
import BluetoothVocabulary
import DBus
import Testing

@Suite("The mirror of bluetoothd's object tree")
struct BlueZObjectTreeTests {
    static let adapterPath: DBusObjectPath = "/org/bluez/hci0"
    static let devicePath: DBusObjectPath = "/org/bluez/hci0/dev_AA_BB_CC_DD_EE_01"
    static let servicePath: DBusObjectPath = "/org/bluez/hci0/dev_AA_BB_CC_DD_EE_01/service000c"
    static let characteristicPath: DBusObjectPath = "/org/bluez/hci0/dev_AA_BB_CC_DD_EE_01/service000c/char000d"

    static func managedObjects() -> DBusValue {
        let objects: [DBusObjectPath: [String: [String: DBusValue]]] = [
            adapterPath: [
                "org.bluez.Adapter1": ["Address": .string("00:11:22:33:44:55"), "Powered": .boolean(true),
                                       "Roles": .stringArray(["central"])],
                "org.freedesktop.DBus.Properties": [:],
            ],
            devicePath: [
                "org.bluez.Device1": ["Address": .string("AA:BB:CC:DD:EE:01"), "AddressType": .string("random"),
                                      "Adapter": .objectPath(adapterPath), "RSSI": .int16(-61),
                                      "Connected": .boolean(false), "UUIDs": .stringArray(["0000180D-0000-1000-8000-00805F9B34FB"])],
            ],
            servicePath: ["org.bluez.GattService1": ["UUID": .string("0000180d-0000-1000-8000-00805f9b34fb"),
                                                      "Device": .objectPath(devicePath), "Primary": .boolean(true)]],
            characteristicPath: ["org.bluez.GattCharacteristic1": [
                "UUID": .string("00002a37-0000-1000-8000-00805f9b34fb"), "Service": .objectPath(servicePath),
                "Flags": .stringArray(["notify"]), "Notifying": .boolean(false), "MTU": .uint16(247)]],
            "/org/bluez": ["org.bluez.AgentManager1": [:]],
        ]
        return objects.dbusValue
    }

    @Test func aSnapshotGivesTypedAdaptersDevicesAndCharacteristics() throws {
        let tree = try BlueZObjectTree(managedObjects: Self.managedObjects())
        let adapter = try #require(tree.adapters.first)
        #expect(adapter.name == "hci0")
        #expect(adapter.powered)
        #expect(adapter.roles == ["central"])
        let device = try #require(tree.device(at: Self.devicePath))
        #expect(device.address == "AA:BB:CC:DD:EE:01")
        #expect(device.addressType == "random")
        #expect(device.adapter == Self.adapterPath)
        #expect(device.identity == DeviceID(address: try #require(BluetoothAddress("AA:BB:CC:DD:EE:01")), addressType: .random))
        #expect(device.adapterID == AdapterID("hci0"))
        #expect(device.rssi == -61)
        #expect(device.uuids == ["0000180d-0000-1000-8000-00805f9b34fb"], "UUIDs are normalised to lower case")
        let characteristic = try #require(tree.characteristics(of: Self.devicePath).first)
        #expect(characteristic.uuid == "00002a37-0000-1000-8000-00805f9b34fb")
        #expect(characteristic.flags == [.notify])
        #expect(characteristic.mtu == 247)
        #expect(tree.services(of: Self.devicePath).map(\.path) == [Self.servicePath])
    }

    @Test func interfacesBlueZClientsDoNotNeedAreNotKept() throws {
        let tree = try BlueZObjectTree(managedObjects: Self.managedObjects())
        #expect(tree.objects["/org/bluez"] == nil)
        #expect(tree.objects[Self.adapterPath]?["org.freedesktop.DBus.Properties"] == nil)
    }

    @Test func propertyChangesMergeAndInvalidate() throws {
        var tree = try BlueZObjectTree(managedObjects: Self.managedObjects())
        let applied = tree.propertiesChanged(
            Self.devicePath, interface: "org.bluez.Device1", changed: ["Connected": .boolean(true)], invalidated: ["RSSI"])
        #expect(applied)
        let device = try #require(tree.device(at: Self.devicePath))
        #expect(device.connected)
        #expect(device.rssi == nil)
        #expect(device.address == "AA:BB:CC:DD:EE:01", "other properties are kept")
    }

    @Test func changesToUnknownObjectsAreIgnored() throws {
        var tree = try BlueZObjectTree(managedObjects: Self.managedObjects())
        let applied = tree.propertiesChanged(
            "/org/bluez/hci0/dev_00_00_00_00_00_09", interface: "org.bluez.Device1", changed: ["RSSI": .int16(-40)], invalidated: [])
        #expect(!applied)
        #expect(tree.devices.count == 1)
    }

    @Test func removingTheLastInterfaceForgetsTheObject() throws {
        var tree = try BlueZObjectTree(managedObjects: Self.managedObjects())
        tree.interfacesRemoved(Self.devicePath, ["org.bluez.Device1"])
        #expect(tree.objects[Self.devicePath] == nil)
        #expect(tree.devices.isEmpty)
    }

    @Test func mistypedPropertiesReadAsAbsentInsteadOfCrashing() throws {
        var tree = BlueZObjectTree()
        tree.interfacesAdded(Self.devicePath, ["org.bluez.Device1": [
            "Address": .uint32(7), "RSSI": .string("loud"), "Connected": .int32(1), "UUIDs": .string("x"),
        ]])
        let device = try #require(tree.device(at: Self.devicePath))
        #expect(device.address == nil)
        #expect(device.rssi == nil)
        #expect(device.connected == false)
        #expect(device.uuids.isEmpty)
    }

    @Test func aDevicesCharacteristicsAndServicesAreItsOwnInPathOrder() throws {
        var tree = try BlueZObjectTree(managedObjects: Self.managedObjects())
        // Added out of order, beside a device whose path begins with this one's.
        let neighbour: DBusObjectPath = "/org/bluez/hci0/dev_AA_BB_CC_DD_EE_010"
        let later: DBusObjectPath = "/org/bluez/hci0/dev_AA_BB_CC_DD_EE_01/service000c/char0010"
        let earlier: DBusObjectPath = "/org/bluez/hci0/dev_AA_BB_CC_DD_EE_01/service000c/char0008"
        let characteristic = ["UUID": DBusValue.string("00002A38-0000-1000-8000-00805F9B34FB")]
        tree.interfacesAdded(later, ["org.bluez.GattCharacteristic1": characteristic])
        tree.interfacesAdded(neighbour, ["org.bluez.Device1": ["Address": .string("AA:BB:CC:DD:EE:10")]])
        let neighbourService: DBusObjectPath = "/org/bluez/hci0/dev_AA_BB_CC_DD_EE_010/service000c"
        tree.interfacesAdded(neighbourService, ["org.bluez.GattService1": ["UUID": .string("180d")]])
        tree.interfacesAdded("/org/bluez/hci0/dev_AA_BB_CC_DD_EE_010/service000c/char000d", ["org.bluez.GattCharacteristic1": characteristic])
        tree.interfacesAdded(earlier, ["org.bluez.GattCharacteristic1": characteristic])
        #expect(tree.characteristics(of: Self.devicePath).map(\.path) == [earlier, Self.characteristicPath, later])
        #expect(tree.characteristics(of: Self.devicePath).last?.uuid == "00002a38-0000-1000-8000-00805f9b34fb")
        #expect(tree.services(of: Self.devicePath).map(\.path) == [Self.servicePath])
        #expect(tree.characteristics(of: neighbour).count == 1)
    }

    @Test func devicesAreFoundByAddressInAnyCase() throws {
        let tree = try BlueZObjectTree(managedObjects: Self.managedObjects())
        #expect(tree.devices(address: "aa:bb:cc:dd:ee:01").map(\.path) == [Self.devicePath])
    }

    @Test func theAddressIndexFollowsAddedChangedAndRemovedDevices() throws {
        var tree = try BlueZObjectTree(managedObjects: Self.managedObjects())
        let second: DBusObjectPath = "/org/bluez/hci1/dev_AA_BB_CC_DD_EE_01"
        // The same device seen by a second adapter: both objects, in path order.
        tree.interfacesAdded(second, ["org.bluez.Device1": ["Address": .string("AA:BB:CC:DD:EE:01")]])
        #expect(tree.devices(address: "AA:BB:CC:DD:EE:01").map(\.path) == [Self.devicePath, second])
        // A changed address moves the object; an invalidated one takes it out.
        tree.propertiesChanged(second, interface: "org.bluez.Device1", changed: ["Address": .string("AA:BB:CC:DD:EE:02")], invalidated: [])
        #expect(tree.devices(address: "AA:BB:CC:DD:EE:01").map(\.path) == [Self.devicePath])
        #expect(tree.devices(address: "aa:bb:cc:dd:ee:02").map(\.path) == [second])
        tree.propertiesChanged(second, interface: "org.bluez.Device1", changed: [:], invalidated: ["Address"])
        #expect(tree.devices(address: "AA:BB:CC:DD:EE:02").isEmpty)
        // A removed Device1 interface leaves the index; other interfaces do not touch it.
        tree.interfacesRemoved(Self.characteristicPath, ["org.bluez.GattCharacteristic1"])
        #expect(tree.devices(address: "AA:BB:CC:DD:EE:01").count == 1)
        tree.interfacesRemoved(Self.devicePath, ["org.bluez.Device1"])
        #expect(tree.devices(address: "AA:BB:CC:DD:EE:01").isEmpty)
    }

    @Test func devicesAreFoundByIdentityOnEveryAdapterOrOnOne() throws {
        var tree = try BlueZObjectTree(managedObjects: Self.managedObjects())
        let address = try #require(BluetoothAddress("AA:BB:CC:DD:EE:01"))
        let random = DeviceID(address: address, addressType: .random)
        let second: DBusObjectPath = "/org/bluez/hci1/dev_AA_BB_CC_DD_EE_01"
        tree.interfacesAdded(second, ["org.bluez.Device1": [
            "Address": .string("aa:bb:cc:dd:ee:01"), "AddressType": .string("random"), "Adapter": .objectPath("/org/bluez/hci1"),
        ]])
        // A public-address device with the same six bytes is another device.
        let publicPath: DBusObjectPath = "/org/bluez/hci1/dev_AA_BB_CC_DD_EE_01_public"
        tree.interfacesAdded(publicPath, ["org.bluez.Device1": ["Address": .string("AA:BB:CC:DD:EE:01")]])
        #expect(tree.devices(random).map(\.path) == [Self.devicePath, second])
        #expect(tree.devices(DeviceID(address: address)).map(\.path) == [publicPath], "no AddressType is BlueZ's public")
        #expect(tree.device(random, on: AdapterID("hci1"))?.path == second)
        #expect(tree.device(random, on: AdapterID("hci0"))?.path == Self.devicePath)
        #expect(tree.device(random, on: AdapterID("hci2")) == nil)
        let elsewhere = DeviceID(address: try #require(BluetoothAddress("AA:BB:CC:DD:EE:02")), addressType: .random)
        #expect(tree.devices(elsewhere).isEmpty)
    }

    @Test func aDeviceWithoutAnAdapterPropertyBelongsToItsPathsParent() {
        var tree = BlueZObjectTree()
        let path: DBusObjectPath = "/org/bluez/hci3/dev_AA_BB_CC_DD_EE_03"
        tree.interfacesAdded(path, ["org.bluez.Device1": ["Address": .string("AA:BB:CC:DD:EE:03")]])
        #expect(tree.device(at: path)?.adapterID == AdapterID("hci3"))
        tree.interfacesAdded("/org/bluez/hci3/dev_nobody", ["org.bluez.Device1": ["Address": .string("nope")]])
        #expect(tree.device(at: "/org/bluez/hci3/dev_nobody")?.identity == nil)
    }

    @Test func aSnapshotOfTheWrongShapeIsAnError() {
        #expect(throws: DBusDecodingError.self) { try BlueZObjectTree(managedObjects: .string("nope")) }
    }
}

@Suite("BlueZ error kinds")
struct BlueZErrorTests {
    @Test(arguments: [
        ("org.bluez.Error.Failed", BlueZError.Kind.failed),
        ("org.bluez.Error.InProgress", .inProgress),
        ("org.bluez.Error.NotReady", .notReady),
        ("org.bluez.Error.AlreadyConnected", .alreadyConnected),
        ("org.bluez.Error.DoesNotExist", .doesNotExist),
        ("org.freedesktop.DBus.Error.UnknownObject", .unknownObject),
        ("org.freedesktop.DBus.Error.ServiceUnknown", .serviceUnavailable),
        ("org.freedesktop.DBus.Error.NoReply", .timeout),
        ("com.example.Something", .other),
        ("org.freedesktop.DBus.Error.UnknownMethod", .unknownObject),
        ("org.freedesktop.DBus.Error.NameHasNoOwner", .serviceUnavailable),
        ("org.freedesktop.DBus.Error.Timeout", .timeout),
        ("org.freedesktop.DBus.Error.Disconnected", .busDisconnected),
    ])
    func namesMapToKinds(name: String, kind: BlueZError.Kind) {
        let error = BlueZError(name: name, message: "le-connection-abort-by-local")
        #expect(error.kind == kind)
        #expect(error.message == "le-connection-abort-by-local", "the text is kept for classification and logs")
    }
}
