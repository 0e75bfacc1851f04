import BlueZ
@testable import Fleet
import DBus
import FleetCore
import Logging
import Synchronization
import Testing
import TestSupport

/// Discovery calls bluetoothd refuses come back classified (the fleet machine backs off and
/// retries them: `FleetStateMachineDiscoveryTests`) and are logged, never dropped in silence.
/// Against a real dbus-daemon, with a stand-in bluetoothd whose adapter refuses `StartDiscovery`
/// as an adapter that is still powering up does (`org.bluez.Error.NotReady`).
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

    @Test func aRefusedStartDiscoveryComesBackClassifiedWithBlueZsError() async throws {
        let bus = try PrivateBus()
        let (bluetoothd, starts) = try await Self.refusingBluetoothd(on: bus)
        let client = BlueZClient(connection: try await DBusConnection.connect(to: .address(bus.address)))
        let logger = Logger(label: "test") { _ in SwiftLogNoOpLogHandler() }
        let bluetooth = try BlueZFleetBluetooth(client: client, pipeline: ValuePipeline(logger: logger), logger: logger)
        try bluetooth.addAdapter(AdapterID("hci0"))

        #expect(await bluetooth.discovery(.setFilter(.anyDevice), on: AdapterID("hci0")) == nil)
        let failure = try #require(await bluetooth.discovery(.start, on: AdapterID("hci0")))
        #expect(starts() == 1)
        #expect(failure.kind == .notReady)
        #expect(failure.name == "org.bluez.Error.NotReady" && failure.message == "Resource Not Ready")
        let unknown = try #require(await bluetooth.discovery(.start, on: AdapterID("hci7")), "no central: refused, not asked")
        #expect(unknown.kind == .noSuchAdapter && starts() == 1)
        await bluetooth.stop()
        await bluetoothd.close()
        await client.connection.close()
    }

    @Test func theJournalTellsEachNewDiscoveryErrorAndARepeatedOneAtPowersOfTwo() {
        let capture = LogCapture()
        var log = FleetEventLog(logger: capture.logger(label: "test"))
        let refusal = DeviceEvent.Failure(kind: .notReady, name: "org.bluez.Error.NotReady", message: "Resource Not Ready")
        for inARow in 1...9 {
            log.record(.discoveryFailed(AdapterID("hci0"), call: .start, refusal, inARow: inARow, retryIn: .seconds(2)))
        }
        let lines = capture.entries.filter { $0.event == "discovery_failed" }
        #expect(lines.map { $0.metadata["repeated"] } == ["1", "2", "4", "8"])
        let first = try? #require(lines.first)
        #expect(first?.level == .warning)
        #expect(first?.metadata["adapter"] == "hci0" && first?.metadata["call"] == "StartDiscovery")
        #expect(first?.metadata["bluez_error"] == "org.bluez.Error.NotReady: Resource Not Ready")
        #expect(first?.metadata["retry_in"] == "2.0 seconds")
    }
}
