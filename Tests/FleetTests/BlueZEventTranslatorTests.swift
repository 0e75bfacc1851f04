import BlueZ
import DBus
@testable import Fleet
import FleetCore
import Logging
import Testing

@Suite("Translating BlueZ events into device events")
struct BlueZEventTranslatorTests {
    static let adapterPath: DBusObjectPath = "/org/bluez/hci0"
    static let devicePath: DBusObjectPath = "/org/bluez/hci0/dev_AA_BB_CC_00_00_01"
    static let characteristicPath: DBusObjectPath = "/org/bluez/hci0/dev_AA_BB_CC_00_00_01/service000c/char000d"
    static let heartRate = "00002a37-0000-1000-8000-00805f9b34fb"
    static let hci0 = AdapterID("hci0")
    static let pipeline = ValuePipeline(logger: Logger(label: "translator-test") { _ in SwiftLogNoOpLogHandler() })

    let id = DeviceID(address: BluetoothAddress("AA:BB:CC:00:00:01")!, addressType: .random)

    /// bluetoothd appearing with `tree` as its snapshot.
    static func appeared(_ tree: BlueZObjectTree) -> BlueZEvent {
        .appeared(owner: ":1.7", adapters: tree.adapters, devices: tree.devices)
    }

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
        let routed = translator.translate(Self.appeared(tree()))
        #expect(routed == [
            .everyone(.bluetoothdAppeared),
            .adapterChanged(Self.hci0, powered: true),
            .everyone(.adapterPowered(Self.hci0)),
            .device(id, .deviceFound(adapter: Self.hci0)),
        ])
    }

    @Test func aLinkThatSurvivedOurRestartIsReportedForAdoption() {
        var translator = BlueZEventTranslator()
        let routed = translator.translate(Self.appeared(tree(connected: true)))
        #expect(routed.contains(.connection(id, connected: true, adapter: Self.hci0)))
    }

    @Test func connectedChangesBecomeLinkEvents() {
        var translator = BlueZEventTranslator()
        let current = tree()
        _ = translator.translate(Self.appeared(current))
        let up = translator.translate(.deviceConnectionChanged(Self.devicePath, connected: true))
        #expect(up == [.connection(id, connected: true, adapter: Self.hci0)])
        let down = translator.translate(.deviceConnectionChanged(Self.devicePath, connected: false))
        #expect(down == [.connection(id, connected: false, adapter: Self.hci0)])
        let reason = translator.translate(
            .deviceDisconnected(Self.devicePath, reason: "org.bluez.Reason.Remote", message: "Connection terminated by remote"))
        #expect(reason == [.device(id, .disconnected(DeviceEvent.Failure(name: "org.bluez.Reason.Remote", message: "Connection terminated by remote")))])
    }

    /// The fleet reads the mirror when it turns an event into an input, and the mirror may be
    /// past the event by then (real stack, loaded: a link a restarted bluetoothd announced was
    /// lost before the announcement was handled). The input shows the object as the event left it.
    @Test func aConnectionEventShowsItsObjectAsTheEventLeftItWhateverTheMirrorSaysSince() throws {
        var translator = BlueZEventTranslator()
        let announced = tree(connected: true)
        let routed = translator.translate(Self.appeared(announced))
        let connection = try #require(routed.first { if case .connection = $0 { true } else { false } })
        let lostSince = tree(connected: false)
        let input = BlueZFleetBluetooth.input(for: connection, tree: lostSince, pipeline: Self.pipeline)
        guard case .device(let device, .connected?, let objects)? = input else {
            Issue.record("not a connected fact: \(String(describing: input))")
            return
        }
        #expect(device == id)
        #expect(objects.map(\.adapter) == [Self.hci0])
        #expect(objects.map(\.connected) == [true])

        // Gone since: the object is put back connected, so the link has an adapter.
        let gone = BlueZFleetBluetooth.input(for: connection, tree: BlueZObjectTree(), pipeline: Self.pipeline)
        guard case .device(_, .connected?, let remaining)? = gone else {
            Issue.record("not a connected fact: \(String(describing: gone))")
            return
        }
        #expect(remaining == [FleetStateMachine.DeviceObject(adapter: Self.hci0, connected: true)])

        // A loss that a reconnection already followed is still a loss, on a disconnected object.
        let loss = translator.translate(.deviceConnectionChanged(Self.devicePath, connected: false))
        let lossInput = BlueZFleetBluetooth.input(for: try #require(loss.first), tree: announced, pipeline: Self.pipeline)
        guard case .device(_, .disconnected(nil)?, let afterLoss)? = lossInput else {
            Issue.record("not a reasonless loss: \(String(describing: lossInput))")
            return
        }
        #expect(afterLoss.map(\.connected) == [false])
    }

    /// A device heard on two adapters: the link the event reports is on hci1, while the mirror
    /// (read later) says hci0 is the connected one. The fleet places a link on the first
    /// connected object, which must be the event's.
    @Test func aConnectionEventPutsItsOwnObjectFirstAmongTheDevicesObjects() throws {
        let hci1 = AdapterID("hci1")
        let hci1Device: DBusObjectPath = "/org/bluez/hci1/dev_AA_BB_CC_00_00_01"
        func twoAdapters(connectedOnHci0: Bool, connectedOnHci1: Bool) -> BlueZObjectTree {
            var tree = tree(connected: connectedOnHci0)
            tree.interfacesAdded("/org/bluez/hci1", ["org.bluez.Adapter1": ["Powered": .boolean(true)]])
            tree.interfacesAdded(hci1Device, ["org.bluez.Device1": [
                "Address": .string("AA:BB:CC:00:00:01"), "AddressType": .string("random"),
                "Adapter": .objectPath("/org/bluez/hci1"), "Connected": .boolean(connectedOnHci1),
            ]])
            return tree
        }
        var translator = BlueZEventTranslator()
        _ = translator.translate(Self.appeared(twoAdapters(connectedOnHci0: false, connectedOnHci1: false)))
        let up = translator.translate(.deviceConnectionChanged(hci1Device, connected: true))
        #expect(up == [.connection(id, connected: true, adapter: hci1)])
        let mirror = twoAdapters(connectedOnHci0: true, connectedOnHci1: false)
        let input = BlueZFleetBluetooth.input(for: try #require(up.first), tree: mirror, pipeline: Self.pipeline)
        guard case .device(_, .connected?, let objects)? = input else {
            Issue.record("not a connected fact: \(String(describing: input))")
            return
        }
        #expect(objects.first(where: \.connected)?.adapter == hci1)
        #expect(Set(objects.map(\.adapter)) == [Self.hci0, hci1])
        // The other object is the mirror's: only the event's own `Connected` is set.
        #expect(objects.first { $0.adapter == Self.hci0 }?.connected == true)
    }

    @Test func notificationsOnTheBusBecomeValuesOfTheirDevice() throws {
        var translator = BlueZEventTranslator()
        let current = tree()
        _ = translator.translate(Self.appeared(current))
        let characteristic = try #require(current.characteristicSource(at: Self.characteristicPath))
        let routed = translator.translate(.valueChanged(characteristic, bytes: [0x06, 72]))
        #expect(routed == [.value(id, characteristic: Self.heartRate, bytes: [0x06, 72])])
    }

    @Test func adapterPowerChangesReachEveryDeviceOnce() {
        var translator = BlueZEventTranslator()
        let current = tree()
        _ = translator.translate(Self.appeared(current))
        let off = BlueZEvent.adapterPowerChanged(Self.hci0, powered: false)
        #expect(translator.translate(off) == [.adapterChanged(Self.hci0, powered: false), .everyone(.adapterUnpowered(Self.hci0))])
        #expect(translator.translate(off) == [.adapterChanged(Self.hci0, powered: false)], "no duplicate unpowered")
    }

    @Test func removedDevicesAndVanishingBluetoothdAreReported() {
        var translator = BlueZEventTranslator()
        let current = tree()
        _ = translator.translate(Self.appeared(current))
        #expect(translator.translate(.deviceRemoved(Self.devicePath, id)) == [.device(id, .deviceLost)])
        #expect(translator.translate(.vanished) == [.adapterRemoved(Self.hci0), .everyone(.bluetoothdVanished)])
        #expect(translator.devices.isEmpty)
    }

    @Test func devicesWithoutAValidAddressAreIgnored() throws {
        var translator = BlueZEventTranslator()
        var current = BlueZObjectTree()
        current.interfacesAdded(Self.devicePath, ["org.bluez.Device1": ["Address": .string("not-an-address")]])
        let device = try #require(current.device(at: Self.devicePath))
        #expect(translator.translate(.deviceAdded(device)).isEmpty)
        #expect(translator.translate(.deviceConnectionChanged(Self.devicePath, connected: true)).isEmpty)
    }

    @Test func devicesAndAdaptersAddedLaterAreAnnounced() throws {
        var translator = BlueZEventTranslator()
        _ = translator.translate(Self.appeared(BlueZObjectTree()))
        let current = tree(connected: true)
        let adapter = try #require(current.adapter(at: Self.adapterPath))
        #expect(translator.translate(.adapterAdded(adapter)) == [.adapterChanged(Self.hci0, powered: true), .everyone(.adapterPowered(Self.hci0))])
        let device = try #require(current.device(at: Self.devicePath))
        #expect(translator.translate(.deviceAdded(device)) == [.device(id, .deviceFound(adapter: Self.hci0)), .connection(id, connected: true, adapter: Self.hci0)])
        #expect(translator.translate(.adapterRemoved(Self.hci0)) == [.everyone(.adapterUnpowered(Self.hci0)), .adapterRemoved(Self.hci0)])
    }

    @Test func onlyTheDeviceFactsTheFleetDecidesWithBecomeUpdates() {
        var translator = BlueZEventTranslator()
        _ = translator.translate(Self.appeared(tree()))
        for fields: BlueZDeviceFields in [.rssi, .name, .alias, .uuids] {
            #expect(translator.translate(.deviceUpdated(Self.devicePath, fields)) == [.deviceUpdated(id)])
        }
        // `Paired` is the device machine's (whether it must bond), the rest nobody's.
        #expect(translator.translate(.deviceUpdated(Self.devicePath, [.rssi, .paired])) == [.pairingChanged(id), .deviceUpdated(id)])
        #expect(translator.translate(.deviceUpdated(Self.devicePath, [.paired, .bonded, .trusted, .txPower])) == [.pairingChanged(id)])
        #expect(translator.translate(.deviceUpdated(Self.devicePath, [.bonded, .trusted, .txPower])).isEmpty)
        #expect(translator.translate(.deviceUpdated("/org/bluez/hci0/dev_00_00_00_00_00_09", .rssi)).isEmpty, "an unknown device")
        // The device machine waits for resolved services itself; GATT objects are the mirror's.
        #expect(translator.translate(.servicesResolvedChanged(Self.devicePath, resolved: true)).isEmpty)
        #expect(translator.translate(.gattObjectAdded(Self.characteristicPath, .characteristic)).isEmpty)
        #expect(translator.translate(.notifyingChanged(Self.characteristicPath, notifying: true)).isEmpty)
        #expect(translator.translate(.malformedSignal("PropertiesChanged from /")).isEmpty)
    }
}
