import BlueZSimulator
import DBus
import Testing
import TestSupport

@Suite("Fault injection through org.wearfleet.Simulator1", .serialized)
struct FaultInjectionTests {
    @Test("SetConnectFailure makes Connect fail with that BlueZ text, counting the attempt; ClearFaults ends it")
    func connectFailure() async throws {
        let fixture = try await SimulatorFixture.start(.trio)
        let path = try await fixture.discover(strap)
        try await fixture.control("SetConnectFailure", [.string(strap), .string("le-connection-abort-by-remote"), .double(1)])
        _ = try await expectError("org.bluez.Error.Failed", "le-connection-abort-by-remote") {
            try await fixture.call(path, "org.bluez.Device1", "Connect")
        }
        #expect(try await fixture.counter("ConnectAttempts", strap) == 1)
        try await fixture.control("ClearFaults", [.string(strap)])
        try await fixture.call(path, "org.bluez.Device1", "Connect")
        #expect(try await fixture.counter("ConnectAttempts", strap) == 2)
        await fixture.stop()
    }

    @Test("a fleet-wide connect failure hits every device")
    func fleetWideConnectFailure() async throws {
        let fixture = try await SimulatorFixture.start(.trio)
        try await fixture.control("SetConnectFailure", [.string(""), .string(""), .double(1)])
        for address in [strap, watch] {
            let path = try await fixture.discover(address)
            _ = try await expectError("org.bluez.Error.Failed", "le-connection-abort-by-local") {
                try await fixture.call(path, "org.bluez.Device1", "Connect")
            }
        }
        await fixture.stop()
    }

    @Test("DropLink disconnects with reason Timeout and counts a link drop")
    func dropLink() async throws {
        let fixture = try await SimulatorFixture.start(.trio)
        let path = try await fixture.connect(strap)
        let disconnected = try await fixture.signals(path: path, interface: "org.bluez.Device1", member: "Disconnected")
        try await fixture.control("DropLink", [.string(strap)])
        let signal = try await disconnected.first(within: .seconds(5), "Disconnected") { _ in true }
        #expect(try signal.body.decode(String.self, at: 0) == "org.bluez.Reason.Timeout")
        #expect(try signal.body.decode(String.self, at: 1) == "Connection timed out")
        #expect(try await fixture.counter("LinkDrops", strap) == 1)
        await fixture.stop()
    }

    @Test("SetLinkLoss drops a connected link by itself")
    func linkLoss() async throws {
        let fixture = try await SimulatorFixture.start(.trio)
        let path = try await fixture.connect(strap)
        let changes = try await fixture.signals(path: path, interface: propertiesInterface, member: "PropertiesChanged")
        try await fixture.control("SetLinkLoss", [.string(strap), .double(0.05)])
        _ = try await changes.first(within: .seconds(5), "Connected=false") {
            (try? $0.body.decode([String: DBusValue].self, at: 1))?["Connected"] == .boolean(false)
        }
        await fixture.stop()
    }

    @Test("SetResolveDelay holds ServicesResolved false after Connected turns true")
    func resolveDelay() async throws {
        let fixture = try await SimulatorFixture.start(.trio)
        let path = try await fixture.discover(strap)
        try await fixture.control("SetResolveDelay", [.string(strap), .double(2)])
        let changes = try await fixture.signals(path: path, interface: propertiesInterface, member: "PropertiesChanged")
        let connecting = Task { try await fixture.call(path, "org.bluez.Device1", "Connect") }
        _ = try await changes.first(within: .seconds(5), "Connected=true") {
            (try? $0.body.decode([String: DBusValue].self, at: 1))?["Connected"] == .boolean(true)
        }
        #expect(try await fixture.property(path, "org.bluez.Device1", "ServicesResolved") == .boolean(false))
        _ = try await connecting.value
        #expect(try await fixture.property(path, "org.bluez.Device1", "ServicesResolved") == .boolean(true))
        await fixture.stop()
    }

    @Test("SetMissingService leaves that service out of the resolved tree")
    func missingService() async throws {
        let fixture = try await SimulatorFixture.start(.trio)
        try await fixture.control("SetMissingService", [.string(watch), .string("1822")])
        let path = try await fixture.connect(watch)
        let uuids = try await fixture.managedObjects().filter { $0.key.isDescendant(of: path) }
            .compactMap { $0.value["org.bluez.GattService1"]?["UUID"] }
        #expect(uuids.contains(.string("0000180d-0000-1000-8000-00805f9b34fb")))
        #expect(!uuids.contains(.string("00001822-0000-1000-8000-00805f9b34fb")))
        await fixture.stop()
    }

    @Test("out of range: the link drops, and Connect fails le-connection-abort-by-local")
    func outOfRange() async throws {
        let fixture = try await SimulatorFixture.start(.trio)
        let path = try await fixture.connect(strap)
        let disconnected = try await fixture.signals(path: path, interface: "org.bluez.Device1", member: "Disconnected")
        try await fixture.control("SetInRange", [.string(strap), .boolean(false)])
        _ = try await disconnected.first(within: .seconds(5), "Disconnected") { _ in true }
        _ = try await expectError("org.bluez.Error.Failed", "le-connection-abort-by-local") {
            try await fixture.call(path, "org.bluez.Device1", "Connect")
        }
        await fixture.stop()
    }

    @Test("adapter power off drops links and refuses discovery with NotReady")
    func adapterPowerOff() async throws {
        let fixture = try await SimulatorFixture.start(.trio)
        let path = try await fixture.connect(strap)
        try await fixture.control("SetAdapterPowered", [.string("hci0"), .boolean(false)])
        #expect(try await fixture.property("/org/bluez/hci0", "org.bluez.Adapter1", "Powered") == .boolean(false))
        #expect(try await fixture.property(path, "org.bluez.Device1", "Connected") == .boolean(false))
        _ = try await expectError("org.bluez.Error.NotReady", "Resource Not Ready") {
            try await fixture.call("/org/bluez/hci0", "org.bluez.Adapter1", "StartDiscovery")
        }
        await fixture.stop()
    }

    @Test("setting Adapter1.Powered false over D-Bus drops the adapter's links")
    func poweredProperty() async throws {
        let fixture = try await SimulatorFixture.start(.trio)
        let path = try await fixture.connect(strap)
        let changes = try await fixture.signals(path: path, interface: propertiesInterface, member: "PropertiesChanged")
        try await fixture.call(
            "/org/bluez/hci0", propertiesInterface, "Set", [.string("org.bluez.Adapter1"), .string("Powered"), .variant(.boolean(false))])
        _ = try await changes.first(within: .seconds(5), "Connected=false") {
            (try? $0.body.decode([String: DBusValue].self, at: 1))?["Connected"] == .boolean(false)
        }
        await fixture.stop()
    }

    @Test("a bluetoothd restart drops the name and every object, then returns with a new unique name")
    func restart() async throws {
        var scenario = Scenario.trio
        scenario.devices[0].bonded = true
        let fixture = try await SimulatorFixture.start(scenario)
        let path = try await fixture.connect(strap)
        let owners = try await fixture.client.watchNameOwner("org.bluez")
        let before = fixture.simulator
        let oldOwner = try #require(await before.uniqueName)
        try await fixture.control("RestartBluetoothd", [.double(0.1)])
        // The stream yields the current owner first, then nil (gone), then the new owner.
        let sequence = try await withTimeout(.seconds(5), "org.bluez to vanish and return") {
            var seen: [String?] = []
            for await owner in owners {
                seen.append(owner)
                if seen.count == 3 { break }
            }
            return seen
        }
        #expect(sequence.count == 3)
        #expect(sequence.first == .some(oldOwner))
        #expect(sequence.dropFirst().first == .some(nil))
        let newOwner = try #require(sequence.last ?? nil)
        #expect(newOwner != oldOwner)
        let objects = try await fixture.managedObjects()
        #expect(objects["/org/bluez/hci0"] != nil)
        // The bonded device is remembered, disconnected; the others are forgotten.
        #expect(objects[path]?["org.bluez.Device1"]?["Connected"] == .boolean(false))
        #expect(objects.count(where: { $0.key.rawValue.contains("dev_") }) == 1)
        guard case .uint32(1)? = try await fixture.counters()["Restarts"] else {
            throw ExpectationFailed(description: "Restarts counter is not 1")
        }
        await fixture.stop()
    }

    @Test("notifications are counted per device")
    func notificationCounter() async throws {
        let fixture = try await SimulatorFixture.start(.trio)
        let device = try await fixture.connect(band)
        let path = try await fixture.characteristic(motionDataUUID, of: device)
        let changes = try await fixture.signals(path: path, interface: propertiesInterface, member: "PropertiesChanged")
        try await fixture.call(path, "org.bluez.GattCharacteristic1", "StartNotify")
        try await withTimeout(.seconds(5), "20 notifications") {
            var received = 0
            for try await message in changes where (try? message.body.decode([String: DBusValue].self, at: 1))?["Value"] != nil {
                received += 1
                if received == 20 { return }
            }
        }
        #expect(try await fixture.counter("NotificationsSent", band) >= 20)
        await fixture.stop()
    }

    @Test("faults naming an unknown device fail InvalidArgs")
    func unknownDevice() async throws {
        let fixture = try await SimulatorFixture.start(.trio)
        do {
            try await fixture.control("DropLink", [.string("11:22:33:44:55:66")])
            Issue.record("DropLink on an unknown device succeeded")
        } catch let error as DBusError {
            #expect(error.name == DBusError.invalidArgs)
        }
        await fixture.stop()
    }

    @Test("a scenario's schedule applies faults at their time")
    func schedule() async throws {
        var scenario = Scenario.trio
        scenario.schedule = [ScheduledFault(at: 0.05, fault: FaultCommand(.adapterPower, adapter: "hci0", powered: false))]
        let fixture = try await SimulatorFixture.start(scenario)
        try await withTimeout(.seconds(5), "hci0 to power off") {
            while try await fixture.property("/org/bluez/hci0", "org.bluez.Adapter1", "Powered") != .boolean(false) {
                await Task.yield()
            }
        }
        await fixture.stop()
    }
}
