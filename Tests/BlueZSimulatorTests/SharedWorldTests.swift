import BlueZSimulator
import DBus
import Foundation
import Glibc
import Testing
import TestSupport

/// Several bluez-sim instances, each a gateway's bluetoothd on a bus of its own, sharing one world
/// of wearables through a directory: a peripheral holds one link in the whole world.
@Suite("A world several gateways share", .serialized)
struct SharedWorldTests {
    static let objectManager = "org.freedesktop.DBus.ObjectManager"
    /// Generous: the whole suite on a starved machine (see `withTimeout`).
    static let patience: Duration = .seconds(60)

    static func path(_ address: String) -> DBusObjectPath {
        DBusObjectPath(stringLiteral: "/org/bluez/hci0/dev_" + address.replacingOccurrences(of: ":", with: "_"))
    }

    static func changedRSSI(_ message: DBusMessage) -> Int16? {
        guard case .int16(let rssi)? = (try? message.body.decode([String: DBusValue].self, at: 1))?["RSSI"] else { return nil }
        return rssi
    }

    /// The error `operation` throws; nil when it succeeds.
    static func error(of operation: @Sendable () async throws -> Void) async -> (any Error)? {
        do {
            try await operation()
            return nil
        } catch {
            return error
        }
    }

    @Test("a device linked by gw1 stops advertising to gw2 (its object there expires) until gw1 disconnects")
    func linkedDeviceIsNotHeardElsewhere() async throws {
        let directory = try WorldDirectory()
        defer { directory.remove() }
        let gw1 = try await SimulatorFixture.start(.twoGatewayWorld, gateway: "gw1", of: directory.world)
        let gw2 = try await SimulatorFixture.start(.twoGatewayWorld, gateway: "gw2", of: directory.world)
        let onGW2 = try await gw2.discover(sharedStrap)
        let removed = try await gw2.signals(interface: Self.objectManager, member: "InterfacesRemoved")
        let added = try await gw2.signals(interface: Self.objectManager, member: "InterfacesAdded")

        let onGW1 = try await gw1.connect(sharedStrap)
        // gw2 discovers all along: its temporary object goes TemporaryTimeout after it last heard the device.
        _ = try await removed.first(within: Self.patience, "gw2's object to expire") {
            (try? $0.body.decode(DBusObjectPath.self, at: 0)) == onGW2
        }
        var record = try directory.world.snapshot().device(sharedStrap)
        #expect(record.holder == "gw1")
        #expect(record.linkedBy == ["gw1"])

        try await gw1.call(onGW1, "org.bluez.Device1", "Disconnect")
        _ = try await added.first(within: Self.patience, "gw2 to hear the device again") {
            (try? $0.body.decode(DBusObjectPath.self, at: 0)) == onGW2
        }
        try await gw2.call(onGW2, "org.bluez.Device1", "Connect")
        record = try directory.world.snapshot().device(sharedStrap)
        #expect(record.holder == "gw2")
        #expect(record.linksMade == ["gw1": 1, "gw2": 1])
        #expect(record.doubleLinks == 0)
        #expect(record.connectsWhileHeldElsewhere.isEmpty)
        await gw1.stop()
        await gw2.stop()
    }

    @Test("Connect through gw2 while gw1 holds the link fails le-connection-abort-by-local, and is counted")
    func connectWhileHeldElsewhereFails() async throws {
        let directory = try WorldDirectory()
        defer { directory.remove() }
        let gw1 = try await SimulatorFixture.start(.twoGatewayWorld, gateway: "gw1", of: directory.world)
        let gw2 = try await SimulatorFixture.start(.twoGatewayWorld, gateway: "gw2", of: directory.world)
        let watchPath = Self.path(bondedWatch)
        try await gw1.call(watchPath, "org.bluez.Device1", "Connect")
        _ = try await expectError("org.bluez.Error.Failed", "le-connection-abort-by-local") {
            try await gw2.call(watchPath, "org.bluez.Device1", "Connect")
        }
        let record = try directory.world.snapshot().device(bondedWatch)
        #expect(record.holder == "gw1")
        #expect(record.connectsWhileHeldElsewhere == ["gw2": 1])
        #expect(record.linksMade == ["gw1": 1])
        #expect(record.doubleLinks == 0)
        // The same counters through either instance's control interface.
        let entry = try await gw2.worldEntry(bondedWatch)
        #expect(entry["Holder"] == .string("gw1"))
        #expect(entry["DoubleLinks"] == .uint32(0))
        #expect(entry["ConnectsWhileHeldElsewhere"] == .dictionary(key: .string, value: .uint32, [DBusDictEntry(key: .string("gw2"), value: .uint32(1))]))

        try await gw1.call(watchPath, "org.bluez.Device1", "Disconnect")
        try await gw2.call(watchPath, "org.bluez.Device1", "Connect")
        let after = try directory.world.snapshot().device(bondedWatch)
        #expect(after.holder == "gw2")
        #expect(after.linksMade == ["gw1": 1, "gw2": 1])
        await gw1.stop()
        await gw2.stop()
    }

    @Test("two gateways connecting at once make one link; the other attempt fails and is counted")
    func simultaneousConnectsMakeOneLink() async throws {
        let directory = try WorldDirectory()
        defer { directory.remove() }
        let gw1 = try await SimulatorFixture.start(.twoGatewayWorld, gateway: "gw1", of: directory.world)
        let gw2 = try await SimulatorFixture.start(.twoGatewayWorld, gateway: "gw2", of: directory.world)
        let watchPath = Self.path(bondedWatch)
        async let first = Self.error { _ = try await gw1.call(watchPath, "org.bluez.Device1", "Connect") }
        async let second = Self.error { _ = try await gw2.call(watchPath, "org.bluez.Device1", "Connect") }
        let outcomes = await [first, second]
        let failures = outcomes.compactMap { $0 as? DBusError }
        #expect(outcomes.compactMap { $0 }.count == 1)
        #expect(failures.count == 1)
        #expect(failures.first?.message == "le-connection-abort-by-local")
        let record = try directory.world.snapshot().device(bondedWatch)
        #expect(record.totalLinksMade == 1)
        #expect(record.connectsWhileHeldElsewhere.values.reduce(0, +) == 1)
        #expect(record.doubleLinks == 0)
        #expect(record.linkedBy.count == 1)
        await gw1.stop()
        await gw2.stop()
    }

    @Test("each gateway hears only its devices, at its own RSSI, and a run-time change reaches the gateway it names")
    func perGatewayRSSI() async throws {
        let directory = try WorldDirectory()
        defer { directory.remove() }
        let gw1 = try await SimulatorFixture.start(.twoGatewayWorld, gateway: "gw1", of: directory.world)
        let gw2 = try await SimulatorFixture.start(.twoGatewayWorld, gateway: "gw2", of: directory.world)
        #expect(gw1.simulator.addresses.contains(gw1OnlyStrap))
        #expect(!gw2.simulator.addresses.contains(gw1OnlyStrap))
        #expect(gw2.simulator.addresses.contains(sharedStrap))

        let onGW1 = try await gw1.discover(sharedStrap)
        let onGW2 = try await gw2.discover(sharedStrap)
        // Each reading is within 4 dB of the gateway's mean.
        guard case .int16(let heardByGW1) = try await gw1.property(onGW1, "org.bluez.Device1", "RSSI"),
            case .int16(let heardByGW2) = try await gw2.property(onGW2, "org.bluez.Device1", "RSSI")
        else { throw ExpectationFailed(description: "no RSSI") }
        #expect((-54...(-46)).contains(heardByGW1))
        #expect((-74...(-66)).contains(heardByGW2))

        let changes = try await gw2.signals(path: onGW2, interface: propertiesInterface, member: "PropertiesChanged")
        // Asked of gw1's instance, for gw2: the world directory carries it.
        try await gw1.control("SetWorldRSSI", [.string(sharedStrap), .string("gw2"), .int16(-40)])
        _ = try await changes.first(within: Self.patience, "gw2 to hear the strap near -40 dBm") { message in
            Self.changedRSSI(message).map { (-44...(-36)).contains($0) } ?? false
        }
        #expect(try directory.world.snapshot().device(sharedStrap).rssi == ["gw2": -40])
        _ = try await expectError("org.freedesktop.DBus.Error.InvalidArgs") {
            try await gw1.control("SetWorldRSSI", [.string(gw1OnlyStrap), .string("gw2"), .int16(-40)])
        }
        await gw1.stop()
        await gw2.stop()
    }

    @Test("a gateway runs once in its world; one stopped can start again")
    func gatewayRunsOnce() async throws {
        let directory = try WorldDirectory()
        defer { directory.remove() }
        let gw1 = try await SimulatorFixture.start(.twoGatewayWorld, gateway: "gw1", of: directory.world)
        // The second gw1 fails in start() before it touches its bus.
        let second = try BlueZSimulator(
            scenario: .twoGatewayWorld, bus: .address("unix:path=/nonexistent"), timings: .fast,
            worldGateway: WorldGateway(id: "gw1", world: directory.world))
        await #expect(throws: SharedWorldError.self) { try await second.start() }
        await gw1.stop()
        #expect(try directory.world.snapshot().gateways["gw1"]?.running == false)
        let again = try await SimulatorFixture.start(.twoGatewayWorld, gateway: "gw1", of: directory.world)
        #expect(try directory.world.snapshot().gateways["gw1"]?.joins == 2)
        await again.stop()
    }

    @Test("a bluez-sim process SIGKILLed while holding a link: the link ends in the world, and the device advertises to gw2 again")
    func killedGatewayReleasesItsLinks() async throws {
        let directory = try WorldDirectory()
        defer { directory.remove() }
        let scenarioFile = directory.world.directory.appendingPathComponent("world.json")
        try JSONEncoder().encode(Scenario.twoGatewayWorld).write(to: scenarioFile)
        let bus = try PrivateBus()
        defer { bus.stop() }
        let process = try ChildProcess(
            FidelityEnvironment.simulatorBinary,
            ["--bus", bus.address, "--world", scenarioFile.path, "--gateway", "gw1", "--world-dir", directory.world.directory.path, "--fast"])
        defer { process.terminate() }
        let ready = try process.readLine(within: 60)
        #expect(ready.hasPrefix("ready "))
        let client = try await DBusConnection.connect(to: .address(bus.address), threadName: "test-client-gw1-process")
        let watchPath = Self.path(bondedWatch)
        _ = try await client.call(destination: "org.bluez", path: watchPath, interface: "org.bluez.Device1", member: "Connect", [])
        #expect(try directory.world.snapshot().device(bondedWatch).holder == "gw1")

        let gw2 = try await SimulatorFixture.start(.twoGatewayWorld, gateway: "gw2", of: directory.world)
        _ = try await expectError("org.bluez.Error.Failed", "le-connection-abort-by-local") {
            try await gw2.call(watchPath, "org.bluez.Device1", "Connect")
        }
        let changes = try await gw2.signals(path: watchPath, interface: propertiesInterface, member: "PropertiesChanged")
        try await gw2.call("/org/bluez/hci0", "org.bluez.Adapter1", "StartDiscovery")

        process.signal(SIGKILL)
        #expect(process.waitForExit() == 128 + SIGKILL)
        await client.close()
        // gw2 discovers: the device is heard again once the world sees gw1's lock gone.
        _ = try await changes.first(within: Self.patience, "gw2 to hear the watch again") { Self.changedRSSI($0) != nil }
        try await gw2.call(watchPath, "org.bluez.Device1", "Connect")

        let ledger = try directory.world.snapshot()
        let record = ledger.device(bondedWatch)
        #expect(record.holder == "gw2")
        #expect(record.heldAtDeath == ["gw1": 1])
        #expect(record.linksMade == ["gw1": 1, "gw2": 1])
        #expect(record.connectsWhileHeldElsewhere == ["gw2": 1])
        #expect(record.doubleLinks == 0)
        #expect(ledger.gateways["gw1"]?.running == false)
        await gw2.stop()
    }
}
