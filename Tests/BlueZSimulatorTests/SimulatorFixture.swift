import BlueZSimulator
import DBus
import TestSupport

/// A private bus with a running simulator and a client connection that talks to it as a BlueZ
/// client would. Call `stop()` at the end of the test.
struct SimulatorFixture: Sendable {
    let bus: PrivateBus
    let simulator: BlueZSimulator
    let client: DBusConnection

    static func start(_ scenario: Scenario, timings: SimulatorTimings = .fast) async throws -> SimulatorFixture {
        let bus = try PrivateBus()
        let simulator = try BlueZSimulator(scenario: scenario, bus: .address(bus.address), timings: timings)
        try await simulator.start()
        let client = try await DBusConnection.connect(to: .address(bus.address), threadName: "test-client")
        return SimulatorFixture(bus: bus, simulator: simulator, client: client)
    }

    func stop() async {
        await client.close()
        await simulator.stop()
        bus.stop()
    }

    // MARK: - Calls

    @discardableResult
    func call(
        _ path: DBusObjectPath, _ interface: String, _ member: String, _ body: [DBusValue] = [],
        timeout: Duration = .seconds(10)
    ) async throws -> [DBusValue] {
        try await client.call(destination: "org.bluez", path: path, interface: interface, member: member, body, timeout: timeout)
    }

    @discardableResult
    func control(_ member: String, _ body: [DBusValue] = []) async throws -> [DBusValue] {
        try await client.call(
            destination: BlueZSimulator.controlName, path: BlueZSimulator.controlPath, interface: SimulatorControl.interfaceName,
            member: member, body)
    }

    func managedObjects() async throws -> [DBusObjectPath: [String: [String: DBusValue]]] {
        let reply = try await call(.root, "org.freedesktop.DBus.ObjectManager", "GetManagedObjects")
        return try reply.decode([DBusObjectPath: [String: [String: DBusValue]]].self, at: 0)
    }

    func property(_ path: DBusObjectPath, _ interface: String, _ name: String) async throws -> DBusValue {
        let reply = try await call(path, "org.freedesktop.DBus.Properties", "Get", [.string(interface), .string(name)])
        return try reply.decode(DBusValue.self, at: 0)
    }

    func counters() async throws -> [String: DBusValue] {
        try await control("GetCounters").decode([String: DBusValue].self, at: 0)
    }

    func counter(_ name: String, _ key: String) async throws -> UInt32 {
        guard case .dictionary(_, _, let entries)? = try await counters()[name] else { return 0 }
        for entry in entries where entry.key == .string(key) {
            if case .uint32(let value) = entry.value { return value }
        }
        return 0
    }

    /// Subscribes to signals from org.bluez matching the parts given.
    func signals(path: DBusObjectPath? = nil, interface: String, member: String) async throws
        -> AsyncThrowingStream<DBusMessage, any Error>
    {
        try await client.signals(matching: MatchRule(sender: "org.bluez", path: path, interface: interface, member: member))
    }

    // MARK: - Steps every test needs

    /// Starts discovery and waits until `address`'s object appears.
    func discover(_ address: String) async throws -> DBusObjectPath {
        guard let path = await simulator.devicePath(of: address) else { throw ExpectationFailed(description: "no device \(address)") }
        let added = try await signals(interface: "org.freedesktop.DBus.ObjectManager", member: "InterfacesAdded")
        do {
            try await call("/org/bluez/hci0", "org.bluez.Adapter1", "StartDiscovery")
        } catch let error as DBusError where error.name == "org.bluez.Error.InProgress" {
            // This client already discovers.
        }
        if try await managedObjects()[path] == nil {
            _ = try await added.first(within: .seconds(5), "InterfacesAdded for \(address)") {
                (try? $0.body.decode(DBusObjectPath.self, at: 0)) == path
            }
        }
        return path
    }

    /// Discovers and connects `address`; returns its device path once ServicesResolved.
    func connect(_ address: String) async throws -> DBusObjectPath {
        let path = try await discover(address)
        try await call(path, "org.bluez.Device1", "Connect")
        return path
    }

    /// The path of the characteristic with `uuid` under `device`.
    func characteristic(_ uuid: String, of device: DBusObjectPath) async throws -> DBusObjectPath {
        for (path, interfaces) in try await managedObjects() where path.isDescendant(of: device) {
            if case .string(uuid)? = interfaces["org.bluez.GattCharacteristic1"]?["UUID"] { return path }
        }
        throw ExpectationFailed(description: "no characteristic \(uuid) under \(device)")
    }
}
