import BlueZSimulator
import DBus
import Testing
import TestSupport

@Suite("Device1 connections", .serialized)
struct DeviceConnectionTests {
    @Test("Connect turns Connected true before ServicesResolved, with the GATT tree exported in between")
    func connectOrder() async throws {
        let fixture = try await SimulatorFixture.start(.trio)
        let path = try await fixture.discover(strap)
        let changes = try await fixture.signals(path: path, interface: propertiesInterface, member: "PropertiesChanged")
        try await fixture.call(path, "org.bluez.Device1", "Connect")
        var seen: [String] = []
        for try await message in changes {
            let values = try message.body.decode([String: DBusValue].self, at: 1)
            if values["Connected"] == .boolean(true) { seen.append("Connected") }
            if values["ServicesResolved"] == .boolean(true) {
                seen.append("ServicesResolved")
                break
            }
        }
        #expect(seen == ["Connected", "ServicesResolved"])
        await fixture.stop()
    }

    @Test("GATT objects have BlueZ's paths: serviceXXXX/charXXXX/descXXXX")
    func gattPaths() async throws {
        let fixture = try await SimulatorFixture.start(.trio)
        let path = try await fixture.connect(strap)
        let objects = try await fixture.managedObjects()
        let below = objects.keys.filter { $0.isDescendant(of: path) && $0 != path }.map(\.rawValue)
        #expect(!below.isEmpty)
        let pattern = /^\/org\/bluez\/hci0\/dev_[0-9A-F_]{17}\/service[0-9a-f]{4}(\/char[0-9a-f]{4}(\/desc[0-9a-f]{4})?)?$/
        for object in below { #expect(object.wholeMatch(of: pattern) != nil, "\(object)") }
        let heartRate = try await fixture.characteristic(heartRateMeasurementUUID, of: path)
        let characteristic = try #require(objects[heartRate]?["org.bluez.GattCharacteristic1"])
        #expect(characteristic["Flags"] == .stringArray(["notify"]))
        #expect(characteristic["MTU"] == .uint16(23))
        #expect(characteristic["Service"].map { if case .objectPath(let service) = $0 { return service == heartRate.parent } else { return false } } == true)
        await fixture.stop()
    }

    @Test("Disconnect ends the link: with Cache=no GATT objects removed, Connected false, Disconnected(Local)")
    func disconnect() async throws {
        // The objects go with the link only where the attribute cache is off (stock Cache=always
        // keeps them: see StockBlueZTests).
        var scenario = Scenario.trio
        scenario.bluez = BlueZSettings(gattCache: .no)
        let fixture = try await SimulatorFixture.start(scenario)
        let path = try await fixture.connect(strap)
        let disconnected = try await fixture.signals(path: path, interface: "org.bluez.Device1", member: "Disconnected")
        try await fixture.call(path, "org.bluez.Device1", "Disconnect")
        let signal = try await disconnected.first(within: .seconds(5), "Disconnected") { _ in true }
        #expect(try signal.body.decode(String.self, at: 0) == "org.bluez.Reason.Local")
        #expect(try await fixture.property(path, "org.bluez.Device1", "Connected") == .boolean(false))
        #expect(try await fixture.managedObjects().keys.filter { $0.isDescendant(of: path) && $0 != path }.isEmpty)
        _ = try await expectError("org.bluez.Error.NotConnected", "Not Connected") {
            try await fixture.call(path, "org.bluez.Device1", "Disconnect")
        }
        await fixture.stop()
    }

    @Test("a concurrent Connect on a device being connected fails InProgress")
    func connectInProgress() async throws {
        var timings = SimulatorTimings.fast
        timings.connectLatency = 0.3
        let fixture = try await SimulatorFixture.start(.trio, timings: timings)
        let path = try await fixture.discover(strap)
        async let first: [DBusValue] = fixture.call(path, "org.bluez.Device1", "Connect")
        // Wait until the attempt is counted, then race it.
        _ = try await withTimeout(.seconds(5), "the first attempt") {
            while try await fixture.counter("ConnectAttempts", strap) == 0 { await Task.yield() }
        }
        _ = try await expectError("org.bluez.Error.InProgress", "In Progress") {
            try await fixture.call(path, "org.bluez.Device1", "Connect")
        }
        _ = try await first
        await fixture.stop()
    }

    @Test("a full adapter refuses with le-connection-concurrent-connection-limit")
    func connectionSlots() async throws {
        var scenario = Scenario.trio
        scenario.adapters = [AdapterSpec(name: "hci0", slots: 1)]
        let fixture = try await SimulatorFixture.start(scenario)
        _ = try await fixture.connect(strap)
        let second = try await fixture.discover(watch)
        _ = try await expectError("org.bluez.Error.Failed", "le-connection-concurrent-connection-limit") {
            try await fixture.call(second, "org.bluez.Device1", "Connect")
        }
        #expect(try await fixture.counter("ConnectAttempts", watch) == 1)
        await fixture.stop()
    }

    @Test("the counters see how many attempts ran at once on an adapter")
    func concurrentAttemptsCounter() async throws {
        var timings = SimulatorTimings.fast
        timings.connectLatency = 0.2
        let fixture = try await SimulatorFixture.start(.trio, timings: timings)
        let paths = [try await fixture.discover(strap), try await fixture.discover(watch), try await fixture.discover(band)]
        try await withThrowingTaskGroup(of: Void.self) { group in
            for path in paths { group.addTask { try await fixture.call(path, "org.bluez.Device1", "Connect") } }
            try await group.waitForAll()
        }
        #expect(try await fixture.counter("MaxConcurrentAttempts", "hci0") == 3)
        await fixture.stop()
    }

    @Test("Pair bonds a connected device; a second Pair fails AlreadyExists")
    func pairing() async throws {
        let fixture = try await SimulatorFixture.start(.trio)
        let path = try await fixture.connect(watch)
        try await fixture.call(path, "org.bluez.Device1", "Pair")
        #expect(try await fixture.property(path, "org.bluez.Device1", "Bonded") == .boolean(true))
        _ = try await expectError("org.bluez.Error.AlreadyExists", "Already Exists") {
            try await fixture.call(path, "org.bluez.Device1", "Pair")
        }
        await fixture.stop()
    }
}
