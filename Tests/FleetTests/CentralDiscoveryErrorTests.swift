import BlueZ
import DBus
import Fleet
import FleetCore
import Synchronization
import Testing
import TestSupport

/// Discovery calls bluetoothd refuses are counted and logged, never dropped in silence. Against a
/// real dbus-daemon, with a stand-in bluetoothd whose adapter refuses `StartDiscovery` as an
/// adapter that is still powering up does (`org.bluez.Error.NotReady`).
@Suite("Discovery errors")
struct CentralDiscoveryErrorTests {
    static let adapterPath: DBusObjectPath = "/org/bluez/hci0"
    static let strap = DeviceID(address: BluetoothAddress("C4:7A:20:00:00:01")!)

    /// Owns `org.bluez` with one adapter whose `StartDiscovery` fails and whose
    /// `SetDiscoveryFilter` succeeds; returns how many `StartDiscovery` calls it answered.
    static func refusingBluetoothd(on bus: PrivateBus) async throws -> (DBusConnection, @Sendable () -> Int) {
        let connection = try await DBusConnection.connect(to: .address(bus.address), threadName: "refusing-bluez")
        let starts = Mutex(0)
        let adapter = DBusInterface(
            "org.bluez.Adapter1",
            methods: [
                DBusMethod("SetDiscoveryFilter", inputs: [DBusArgument("filter", .dictionary(key: .string, value: .variant))], handler: .sync { _ in [] }),
                DBusMethod("StartDiscovery", handler: .sync { _ in
                    starts.withLock { $0 += 1 }
                    throw DBusError(name: "org.bluez.Error.NotReady", message: "Resource Not Ready")
                }),
                DBusMethod("StopDiscovery", handler: .sync { _ in [] }),
            ],
            properties: [DBusProperty("Powered", .boolean)])
        try await connection.export(adapter, properties: ["Powered": .boolean(true)], at: adapterPath)
        _ = try await connection.call(
            destination: "org.freedesktop.DBus", path: "/org/freedesktop/DBus", interface: "org.freedesktop.DBus",
            member: "RequestName", [.string("org.bluez"), .uint32(4)])
        return (connection, { starts.withLock { $0 } })
    }

    @Test func aRefusedStartDiscoveryIsCountedAndLoggedWithTheAdapterAndBlueZsError() async throws {
        let bus = try PrivateBus()
        let (bluetoothd, starts) = try await Self.refusingBluetoothd(on: bus)
        let client = BlueZClient(connection: try await DBusConnection.connect(to: .address(bus.address)))
        let capture = LogCapture()
        let central = try CentralActor(
            adapter: AdapterID("hci0"), client: client, scanUUIDs: [], minimumRSSI: nil, logger: capture.logger(label: "test"))

        // A missing device needs discovery: the call is refused.
        await central.startResolve(Self.strap)
        #expect(starts() == 1)
        #expect(await central.discoveryErrors == 1)
        #expect(await central.isDiscovering == false)
        let line = try #require(capture.entries.first { $0.event == "discovery_failed" })
        #expect(line.level == .warning)
        #expect(line.metadata["adapter"] == "hci0")
        #expect(line.metadata["call"] == "StartDiscovery")
        #expect(line.metadata["bluez_error"] == "org.bluez.Error.NotReady: Resource Not Ready")

        // The next change tries again; a repeated error is counted every time, logged at 1, 2, 4, ….
        for _ in 0..<3 { await central.resume() }
        #expect(starts() == 4)
        #expect(await central.discoveryErrors == 4)
        #expect(capture.entries.filter { $0.event == "discovery_failed" }.map { $0.metadata["repeated"] } == ["1", "2", "4"])
        await bluetoothd.close()
        await client.connection.close()
    }
}
