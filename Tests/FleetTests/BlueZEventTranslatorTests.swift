import BlueZ
import DBus
import Fleet
import FleetCore
import Testing

@Suite("Translating BlueZ events into device events")
struct BlueZEventTranslatorTests {
    static let adapterPath: DBusObjectPath = "/org/bluez/hci0"
    static let devicePath: DBusObjectPath = "/org/bluez/hci0/dev_AA_BB_CC_00_00_01"
    static let characteristicPath: DBusObjectPath = "/org/bluez/hci0/dev_AA_BB_CC_00_00_01/service000c/char000d"
    static let heartRate = "00002a37-0000-1000-8000-00805f9b34fb"
    static let hci0 = AdapterID("hci0")

    let id = DeviceID(address: BluetoothAddress("AA:BB:CC:00:00:01")!, addressType: .random)

    func tree(connected: Bool = false, powered: Bool = true) -> BlueZObjectTree {
        var tree = BlueZObjectTree()
        tree.interfacesAdded(Self.adapterPath, ["org.bluez.Adapter1": ["Powered": .boolean(powered)]])
        tree.interfacesAdded(Self.devicePath, ["org.bluez.Device1": [
            "Address": .string("AA:BB:CC:00:00:01"), "AddressType": .string("random"),
            "Adapter": .objectPath(Self.adapterPath), "Connected": .boolean(connected),
        ]])
        tree.interfacesAdded(Self.characteristicPath, ["org.bluez.GattCharacteristic1": [
            "UUID": .string(Self.heartRate.uppercased()), "Flags": .stringArray(["notify"]),
        ]])
        return tree
    }

    @Test func bluetoothdAppearingAnnouncesAdaptersAndKnownDevices() {
        var translator = BlueZEventTranslator()
        let routed = translator.translate(.appeared(owner: ":1.7"), tree: tree())
        #expect(routed == [
            .everyone(.bluetoothdAppeared),
            .adapterChanged(Self.hci0, powered: true),
            .everyone(.adapterPowered(Self.hci0)),
            .device(id, .deviceFound(adapter: Self.hci0)),
        ])
    }

    @Test func aLinkThatSurvivedOurRestartIsReportedForAdoption() {
        var translator = BlueZEventTranslator()
        let routed = translator.translate(.appeared(owner: ":1.7"), tree: tree(connected: true))
        #expect(routed.contains(.device(id, .connected)))
    }

    @Test func connectedChangesBecomeLinkEvents() {
        var translator = BlueZEventTranslator()
        let current = tree()
        _ = translator.translate(.appeared(owner: ":1.7"), tree: current)
        let up = translator.translate(
            .propertiesChanged(Self.devicePath, interface: "org.bluez.Device1", changed: ["Connected": .boolean(true)], invalidated: []),
            tree: current)
        #expect(up == [.device(id, .connected)])
        let down = translator.translate(
            .propertiesChanged(Self.devicePath, interface: "org.bluez.Device1", changed: ["Connected": .boolean(false)], invalidated: []),
            tree: current)
        #expect(down == [.device(id, .disconnected(nil))])
        let reason = translator.translate(
            .deviceDisconnected(Self.devicePath, reason: "org.bluez.Reason.Remote", message: "Connection terminated by remote"),
            tree: current)
        #expect(reason == [.device(id, .disconnected(DeviceEvent.Failure(name: "org.bluez.Reason.Remote", message: "Connection terminated by remote")))])
    }

    @Test func notificationsOnTheBusBecomeValuesOfTheirDevice() {
        var translator = BlueZEventTranslator()
        let current = tree()
        _ = translator.translate(.appeared(owner: ":1.7"), tree: current)
        let routed = translator.translate(
            .propertiesChanged(Self.characteristicPath, interface: "org.bluez.GattCharacteristic1",
                               changed: ["Value": .bytes([0x06, 72])], invalidated: []),
            tree: current)
        #expect(routed == [.value(id, characteristic: Self.heartRate, bytes: [0x06, 72])])
    }

    @Test func adapterPowerChangesReachEveryDeviceOnce() {
        var translator = BlueZEventTranslator()
        let current = tree()
        _ = translator.translate(.appeared(owner: ":1.7"), tree: current)
        let off = BlueZEvent.propertiesChanged(Self.adapterPath, interface: "org.bluez.Adapter1", changed: ["Powered": .boolean(false)], invalidated: [])
        #expect(translator.translate(off, tree: current) == [.adapterChanged(Self.hci0, powered: false), .everyone(.adapterUnpowered(Self.hci0))])
        #expect(translator.translate(off, tree: current) == [.adapterChanged(Self.hci0, powered: false)], "no duplicate unpowered")
    }

    @Test func removedDevicesAndVanishingBluetoothdAreReported() {
        var translator = BlueZEventTranslator()
        let current = tree()
        _ = translator.translate(.appeared(owner: ":1.7"), tree: current)
        #expect(translator.translate(.interfacesRemoved(Self.devicePath, interfaces: ["org.bluez.Device1"]), tree: current) == [.device(id, .deviceLost)])
        #expect(translator.translate(.vanished, tree: BlueZObjectTree()) == [.adapterRemoved(Self.hci0), .everyone(.bluetoothdVanished)])
        #expect(translator.devices.isEmpty)
    }

    @Test func devicesWithoutAValidAddressAreIgnored() {
        var translator = BlueZEventTranslator()
        var current = BlueZObjectTree()
        current.interfacesAdded(Self.devicePath, ["org.bluez.Device1": ["Address": .string("not-an-address")]])
        #expect(translator.translate(.interfacesAdded(Self.devicePath, interfaces: ["org.bluez.Device1"]), tree: current).isEmpty)
    }
}
