import BlueZSimulator
import DBus
import Testing
import TestSupport

/// What bluez-sim does by default because Debian 12's bluetoothd (BlueZ 5.66, stock main.conf)
/// does it: see NOTES.md, "bluez-sim against stock BlueZ".
@Suite("Stock BlueZ behaviour", .serialized)
struct StockBlueZTests {
    /// Two adapters in one box that both hear every device of the trio (strongest on hci0).
    static var twoAdapters: Scenario {
        var scenario = Scenario.trio
        scenario.adapters = [AdapterSpec(name: "hci0", slots: 5), AdapterSpec(name: "hci1", slots: 5)]
        return scenario
    }

    /// Starts discovery on hci0 and hci1 and waits until every object of `paths` appeared.
    static func discoverOnBoth(_ paths: Set<DBusObjectPath>, _ fixture: SimulatorFixture) async throws {
        let added = try await fixture.signals(interface: "org.freedesktop.DBus.ObjectManager", member: "InterfacesAdded")
        try await fixture.call("/org/bluez/hci0", "org.bluez.Adapter1", "StartDiscovery")
        try await fixture.call("/org/bluez/hci1", "org.bluez.Adapter1", "StartDiscovery")
        try await withTimeout(.seconds(5), "\(paths) appear") {
            var missing = paths
            for try await message in added {
                if let path = try? message.body.decode(DBusObjectPath.self, at: 0) { missing.remove(path) }
                if missing.isEmpty { return }
            }
        }
    }

    @Test("ConnectDevice is absent without experimental APIs: UnknownMethod, and not introspected")
    func connectDeviceAbsent() async throws {
        let fixture = try await SimulatorFixture.start(.trio)
        _ = try await expectError(DBusError.unknownMethod) {
            try await fixture.call(
                "/org/bluez/hci0", "org.bluez.Adapter1", "ConnectDevice",
                [.stringVariantMap(["Address": .string(band), "AddressType": .string("random")])])
        }
        let xml = try await fixture.call("/org/bluez/hci0", "org.freedesktop.DBus.Introspectable", "Introspect")
        let text = try xml.decode(String.self, at: 0)
        #expect(text.contains("StartDiscovery"))
        #expect(!text.contains("ConnectDevice"))
        await fixture.stop()
    }

    @Test("every adapter that hears a device has its own Device1 object, with its own RSSI")
    func objectPerAdapter() async throws {
        // The objects must outlive the reads below: with `.fast`'s 0.5 s TemporaryTimeout, a
        // loaded machine that starved the simulated advertisements for longer had hci0's object
        // expire before `GetManagedObjects` (seen under `stress-ng --cpu 2`). Expiry has tests
        // of its own.
        var timings = SimulatorTimings.fast
        timings.temporaryTimeout = 30
        let fixture = try await SimulatorFixture.start(Self.twoAdapters, timings: timings)
        let onHci0 = try #require(await fixture.simulator.devicePath(of: strap, on: "hci0"))
        let onHci1 = try #require(await fixture.simulator.devicePath(of: strap, on: "hci1"))
        #expect(onHci0 == "/org/bluez/hci0/dev_00_1A_7D_00_00_01")
        #expect(onHci1 == "/org/bluez/hci1/dev_00_1A_7D_00_00_01")
        try await Self.discoverOnBoth([onHci0, onHci1], fixture)
        let objects = try await fixture.managedObjects()
        let first = try #require(objects[onHci0]?["org.bluez.Device1"])
        let second = try #require(objects[onHci1]?["org.bluez.Device1"])
        #expect(first["Adapter"] == .objectPath("/org/bluez/hci0"))
        #expect(second["Adapter"] == .objectPath("/org/bluez/hci1"))
        #expect(first["Address"] == second["Address"])
        guard case .int16(let near)? = first["RSSI"], case .int16(let far)? = second["RSSI"] else {
            throw ExpectationFailed(description: "both objects report RSSI")
        }
        // hci1 hears the strap 6 dB weaker on average; each reading wanders ±4 dB around its
        // adapter's mean, so one pair of readings may even cross (a 6 dB gap, 8 dB of wander):
        // each is checked against its own adapter's range.
        let mean = try #require(try Self.twoAdapters.resolved().devices.first { $0.address == strap }).rssi
        #expect((mean - 4...mean + 4).contains(Int(near)), "hci0 reads \(near) around \(mean)")
        #expect((mean - 10...mean - 2).contains(Int(far)), "hci1 reads \(far) around \(mean - 6)")
        await fixture.stop()
    }

    @Test("a peripheral holds one link: a second adapter's Connect fails le-connection-abort-by-local")
    func oneLinkAtATime() async throws {
        var scenario = Self.twoAdapters
        scenario.devices[0].bonded = true
        let fixture = try await SimulatorFixture.start(scenario)
        let onHci0 = try #require(await fixture.simulator.devicePath(of: strap, on: "hci0"))
        let onHci1 = try #require(await fixture.simulator.devicePath(of: strap, on: "hci1"))
        try await fixture.call(onHci0, "org.bluez.Device1", "Connect")
        _ = try await expectError("org.bluez.Error.Failed", "le-connection-abort-by-local") {
            try await fixture.call(onHci1, "org.bluez.Device1", "Connect")
        }
        #expect(try await fixture.property(onHci0, "org.bluez.Device1", "Connected") == .boolean(true))
        #expect(try await fixture.property(onHci1, "org.bluez.Device1", "Connected") == .boolean(false))
        // The other adapter's object has no link to end.
        _ = try await expectError("org.bluez.Error.NotConnected") {
            try await fixture.call(onHci1, "org.bluez.Device1", "Disconnect")
        }
        // Once the link through hci0 is gone, hci1 may have the device.
        try await fixture.call(onHci0, "org.bluez.Device1", "Disconnect")
        try await fixture.call(onHci1, "org.bluez.Device1", "Connect")
        #expect(try await fixture.property(onHci1, "org.bluez.Device1", "Connected") == .boolean(true))
        await fixture.stop()
    }

    @Test("a duplicate object on the other adapter expires after TemporaryTimeout while the link lives")
    func duplicateExpiresUnderALink() async throws {
        let fixture = try await SimulatorFixture.start(Self.twoAdapters)
        let onHci0 = try #require(await fixture.simulator.devicePath(of: strap, on: "hci0"))
        let onHci1 = try #require(await fixture.simulator.devicePath(of: strap, on: "hci1"))
        try await Self.discoverOnBoth([onHci0, onHci1], fixture)
        let removed = try await fixture.signals(interface: "org.freedesktop.DBus.ObjectManager", member: "InterfacesRemoved")
        try await fixture.call(onHci1, "org.bluez.Device1", "Connect")
        try await fixture.call("/org/bluez/hci0", "org.bluez.Adapter1", "StopDiscovery")
        try await fixture.call("/org/bluez/hci1", "org.bluez.Adapter1", "StopDiscovery")
        _ = try await removed.first(within: .seconds(5), "hci0's object expires") {
            (try? $0.body.decode(DBusObjectPath.self, at: 0)) == onHci0
        }
        let objects = try await fixture.managedObjects()
        #expect(objects[onHci0] == nil)
        #expect(objects[onHci1]?["org.bluez.Device1"]?["Connected"] == .boolean(true))
        await fixture.stop()
    }

    @Test("bonded devices' objects stay; unbonded ones go TemporaryTimeout after they were last seen")
    func bondedObjectsStay() async throws {
        var scenario = Scenario.trio
        scenario.devices[0].bonded = true
        let fixture = try await SimulatorFixture.start(scenario)
        let bonded = try #require(await fixture.simulator.devicePath(of: strap))
        let unbonded = try await fixture.discover(watch)
        let removed = try await fixture.signals(interface: "org.freedesktop.DBus.ObjectManager", member: "InterfacesRemoved")
        try await fixture.call("/org/bluez/hci0", "org.bluez.Adapter1", "StopDiscovery")
        _ = try await removed.first(within: .seconds(5), "the unbonded watch expires") {
            (try? $0.body.decode(DBusObjectPath.self, at: 0)) == unbonded
        }
        // The strap's object existed (unseen) before the watch was last heard: had it been
        // temporary, it would have expired first.
        #expect(try await fixture.managedObjects()[bonded] != nil)
        await fixture.stop()
    }

    @Test("Cache=always keeps a disconnected device's GATT objects; they answer Not connected and serve the next link")
    func gattCacheKeepsObjects() async throws {
        var scenario = Scenario.trio
        scenario.devices[0].bonded = true
        let fixture = try await SimulatorFixture.start(scenario)
        let path = try #require(await fixture.simulator.devicePath(of: strap))
        try await fixture.call(path, "org.bluez.Device1", "Connect")
        let battery = try await fixture.characteristic(batteryLevelUUID, of: path)
        let before = try await fixture.managedObjects().keys.filter { $0.isDescendant(of: path) && $0 != path }.sorted()
        let disconnected = try await fixture.signals(path: path, interface: "org.bluez.Device1", member: "Disconnected")
        try await fixture.call(path, "org.bluez.Device1", "Disconnect")
        _ = try await disconnected.first(within: .seconds(5), "Disconnected") { _ in true }
        let after = try await fixture.managedObjects().keys.filter { $0.isDescendant(of: path) && $0 != path }.sorted()
        #expect(after == before)
        #expect(try await fixture.property(path, "org.bluez.Device1", "ServicesResolved") == .boolean(false))
        _ = try await expectError("org.bluez.Error.Failed", "Not connected") {
            try await fixture.call(battery, "org.bluez.GattCharacteristic1", "ReadValue", [.stringVariantMap([:])])
        }
        try await fixture.call(path, "org.bluez.Device1", "Connect")
        let value = try await fixture.call(battery, "org.bluez.GattCharacteristic1", "ReadValue", [.stringVariantMap([:])])
        #expect(try value.decode([UInt8].self, at: 0).count == 1)
        await fixture.stop()
    }

    @Test("Connect makes a heard device permanent on that adapter: it outlives TemporaryTimeout and a restart")
    func connectKeepsTheDevice() async throws {
        let fixture = try await SimulatorFixture.start(.trio)
        let strapPath = try await fixture.discover(strap)
        let watchPath = try await fixture.discover(watch)
        try await fixture.call(strapPath, "org.bluez.Device1", "Connect")
        try await fixture.call(strapPath, "org.bluez.Device1", "Disconnect")
        let removed = try await fixture.signals(interface: "org.freedesktop.DBus.ObjectManager", member: "InterfacesRemoved")
        try await fixture.call("/org/bluez/hci0", "org.bluez.Adapter1", "StopDiscovery")
        // The watch, only heard, expires; the strap, heard before it, does not.
        _ = try await removed.first(within: .seconds(5), "the watch expires") {
            (try? $0.body.decode(DBusObjectPath.self, at: 0)) == watchPath
        }
        #expect(try await fixture.managedObjects()[strapPath] != nil)
        // bluetoothd stored it: after a restart it is there again, the watch is not.
        let owner = try await fixture.client.signals(
            matching: MatchRule(
                sender: "org.freedesktop.DBus", path: "/org/freedesktop/DBus", interface: "org.freedesktop.DBus",
                member: "NameOwnerChanged"))
        try await fixture.control("RestartBluetoothd", [.double(0.05)])
        _ = try await owner.first(within: .seconds(5), "bluetoothd back") { message in
            (try? message.body.decode(String.self, at: 0)) == "org.bluez" && (try? message.body.decode(String.self, at: 2))?.isEmpty == false
        }
        let objects = try await fixture.managedObjects()
        #expect(objects[strapPath] != nil)
        #expect(objects[watchPath] == nil)
        await fixture.stop()
    }
}
