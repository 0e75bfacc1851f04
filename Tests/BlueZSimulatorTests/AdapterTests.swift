import BlueZSimulator
import DBus
import Testing
import TestSupport

@Suite("Adapter1 and discovery", .serialized)
struct AdapterTests {
    @Test("the tree has an ObjectManager at /, a central, powered adapter and AgentManager1")
    func treeShape() async throws {
        let fixture = try await SimulatorFixture.start(.trio)
        let objects = try await fixture.managedObjects()
        let adapter = try #require(objects["/org/bluez/hci0"]?["org.bluez.Adapter1"])
        #expect(adapter["Powered"] == .boolean(true))
        #expect(adapter["Roles"] == .stringArray(["central", "peripheral"]))
        #expect(adapter["Discovering"] == .boolean(false))
        #expect(objects["/org/bluez"]?["org.bluez.AgentManager1"] != nil)
        // Unbonded devices are not known before discovery.
        #expect(!objects.keys.contains { $0.rawValue.contains("dev_") })
        await fixture.stop()
    }

    @Test("StartDiscovery makes devices appear through InterfacesAdded from /")
    func discoveryAddsDevices() async throws {
        let fixture = try await SimulatorFixture.start(.trio)
        let added = try await fixture.signals(interface: "org.freedesktop.DBus.ObjectManager", member: "InterfacesAdded")
        try await fixture.call("/org/bluez/hci0", "org.bluez.Adapter1", "StartDiscovery")
        let signal = try await added.first(within: .seconds(5), "a device") { message in
            (try? message.body.decode(DBusObjectPath.self, at: 0))?.rawValue.contains("dev_") == true
        }
        #expect(signal.path == .root)
        let interfaces = try signal.body.decode([String: [String: DBusValue]].self, at: 1)
        let device = try #require(interfaces["org.bluez.Device1"])
        #expect(device["RSSI"] != nil)
        #expect(device["Alias"] != nil)
        #expect(device["Adapter"] == .objectPath("/org/bluez/hci0"))
        #expect(try await fixture.property("/org/bluez/hci0", "org.bluez.Adapter1", "Discovering") == .boolean(true))
        await fixture.stop()
    }

    @Test("a second StartDiscovery from the same client fails InProgress")
    func discoveryIsPerClient() async throws {
        let fixture = try await SimulatorFixture.start(.trio)
        try await fixture.call("/org/bluez/hci0", "org.bluez.Adapter1", "StartDiscovery")
        _ = try await expectError("org.bluez.Error.InProgress", "Operation already in progress") {
            try await fixture.call("/org/bluez/hci0", "org.bluez.Adapter1", "StartDiscovery")
        }
        _ = try await expectError("org.bluez.Error.Failed", "No discovery started") {
            let other = try await DBusConnection.connect(to: .address(fixture.bus.address))
            defer { Task { await other.close() } }
            _ = try await other.call(
                destination: "org.bluez", path: "/org/bluez/hci0", interface: "org.bluez.Adapter1", member: "StopDiscovery")
        }
        await fixture.stop()
    }

    @Test("discovery ends when its client's bus connection closes")
    func discoveryEndsWithClient() async throws {
        let fixture = try await SimulatorFixture.start(.trio)
        let changes = try await fixture.signals(path: "/org/bluez/hci0", interface: propertiesInterface, member: "PropertiesChanged")
        let other = try await DBusConnection.connect(to: .address(fixture.bus.address))
        _ = try await other.call(
            destination: "org.bluez", path: "/org/bluez/hci0", interface: "org.bluez.Adapter1", member: "StartDiscovery")
        await other.close()
        _ = try await changes.first(within: .seconds(5), "Discovering=false") { message in
            (try? message.body.decode([String: DBusValue].self, at: 1))?["Discovering"] == .boolean(false)
        }
        await fixture.stop()
    }

    @Test("a cached device gets RSSI updates while discovery runs")
    func rssiUpdates() async throws {
        var scenario = Scenario.trio
        scenario.devices[0].bonded = true
        let fixture = try await SimulatorFixture.start(scenario)
        let path = try #require(await fixture.simulator.devicePath(of: strap))
        #expect(try await fixture.managedObjects()[path] != nil)
        let changes = try await fixture.signals(path: path, interface: propertiesInterface, member: "PropertiesChanged")
        try await fixture.call("/org/bluez/hci0", "org.bluez.Adapter1", "StartDiscovery")
        _ = try await changes.first(within: .seconds(5), "RSSI change") { message in
            (try? message.body.decode([String: DBusValue].self, at: 1))?["RSSI"] != nil
        }
        await fixture.stop()
    }

    @Test("unbonded, disconnected devices disappear after TemporaryTimeout; Connect then fails UnknownObject")
    func temporaryTimeout() async throws {
        let fixture = try await SimulatorFixture.start(.trio)
        let path = try await fixture.discover(strap)
        let removed = try await fixture.signals(interface: "org.freedesktop.DBus.ObjectManager", member: "InterfacesRemoved")
        try await fixture.call("/org/bluez/hci0", "org.bluez.Adapter1", "StopDiscovery")
        _ = try await removed.first(within: .seconds(5), "InterfacesRemoved") {
            (try? $0.body.decode(DBusObjectPath.self, at: 0)) == path
        }
        _ = try await expectError(DBusError.unknownObject) {
            try await fixture.call(path, "org.bluez.Device1", "Connect")
        }
        await fixture.stop()
    }

    @Test("a device heard while discovery runs keeps its object though the simulator was starved past TemporaryTimeout")
    func starvationDoesNotExpireAHeardDevice() async throws {
        var timings = SimulatorTimings.fast
        timings.temporaryTimeout = 0.2
        let fixture = try await SimulatorFixture.start(.trio, timings: timings)
        let path = try await fixture.discover(strap)
        // Each starvation lets the sweep (every 40 ms) and the discovery loop (every 50 ms) wake
        // together; a sweep that ran first by the wall clock would find the strap 0.6 s unheard.
        for _ in 0..<4 {
            await fixture.simulator.starve(seconds: 0.6)
            try await fixture.call(path, "org.freedesktop.DBus.Properties", "Get", [.string("org.bluez.Device1"), .string("Address")])
        }
        try await fixture.call(path, "org.bluez.Device1", "Connect")
        #expect(try await fixture.property(path, "org.bluez.Device1", "ServicesResolved") == .boolean(true))
        await fixture.stop()
    }

    @Test("SetDiscoveryFilter rejects unknown keys and transports with InvalidArguments")
    func discoveryFilterValidation() async throws {
        let fixture = try await SimulatorFixture.start(.trio)
        try await fixture.call(
            "/org/bluez/hci0", "org.bluez.Adapter1", "SetDiscoveryFilter",
            [.stringVariantMap(["Transport": .string("le"), "DuplicateData": .boolean(false)])])
        _ = try await expectError("org.bluez.Error.InvalidArguments", "Invalid arguments in method call") {
            try await fixture.call(
                "/org/bluez/hci0", "org.bluez.Adapter1", "SetDiscoveryFilter", [.stringVariantMap(["Transport": .string("radio")])])
        }
        let filters = try await fixture.call("/org/bluez/hci0", "org.bluez.Adapter1", "GetDiscoveryFilters")
        #expect(try filters.decode([String].self, at: 0).contains("Transport"))
        await fixture.stop()
    }

    @Test("with experimental APIs, ConnectDevice connects a device that was never discovered")
    func connectDevice() async throws {
        // ConnectDevice is experimental in BlueZ: only a bluetoothd run with --experimental has it.
        var scenario = Scenario.trio
        scenario.bluez = BlueZSettings(experimental: true)
        let fixture = try await SimulatorFixture.start(scenario)
        let reply = try await fixture.call(
            "/org/bluez/hci0", "org.bluez.Adapter1", "ConnectDevice",
            [.stringVariantMap(["Address": .string(band), "AddressType": .string("random")])])
        let path = try reply.decode(DBusObjectPath.self, at: 0)
        #expect(try await fixture.property(path, "org.bluez.Device1", "Connected") == .boolean(true))
        await fixture.stop()
    }
}

@Suite("Discovery filters", .serialized)
struct DiscoveryFilterTests {
    @Test("a UUIDs filter shows only devices advertising one of them")
    func uuidFilter() async throws {
        let fixture = try await SimulatorFixture.start(.trio)
        try await fixture.call(
            "/org/bluez/hci0", "org.bluez.Adapter1", "SetDiscoveryFilter",
            [.stringVariantMap(["UUIDs": .stringArray(["7a1e0001-3c6f-4b8d-9e2a-5d0c8f6b1a40"]), "Transport": .string("le")])])
        _ = try await fixture.discover(band)
        // Three more RSSI updates of the band mean three more advertising rounds, in which the
        // other two devices advertised too and must have stayed unseen.
        let bandPath = try #require(await fixture.simulator.devicePath(of: band))
        let changes = try await fixture.signals(path: bandPath, interface: propertiesInterface, member: "PropertiesChanged")
        try await withTimeout(.seconds(5), "three advertising rounds") {
            var rounds = 0
            for try await _ in changes {
                rounds += 1
                if rounds == 3 { return }
            }
        }
        let devices = try await fixture.managedObjects().keys.filter { $0.rawValue.contains("dev_") }
        #expect(devices == [bandPath])
        await fixture.stop()
    }

    @Test("filters with mistyped values fail InvalidArguments")
    func mistyped() async throws {
        let fixture = try await SimulatorFixture.start(.trio)
        _ = try await expectError("org.bluez.Error.InvalidArguments", "Invalid arguments in method call") {
            try await fixture.call(
                "/org/bluez/hci0", "org.bluez.Adapter1", "SetDiscoveryFilter", [.stringVariantMap(["RSSI": .int32(-70)])])
        }
        await fixture.stop()
    }
}
