import BlueZ
import DBus
import Fleet
import FleetCore
import Testing
import TestSupport

/// BlueZ can set `ServicesResolved` before it has exported every GATT object. The wait after it
/// is for what the device's class requires, not for the first characteristic: against a real
/// dbus-daemon and a stand-in bluetoothd that exports the required characteristic late.
@Suite("The ServicesResolved race")
struct ServicesResolvedRaceTests {
    static let heartRateService = "0000180d-0000-1000-8000-00805f9b34fb"
    static let heartRate = "00002a37-0000-1000-8000-00805f9b34fb"
    static let bodySensorLocation = "00002a38-0000-1000-8000-00805f9b34fb"
    static let service: DBusObjectPath = "/org/bluez/hci0/dev_C4_7A_20_00_00_01/service000a"
    static let strap = StandInBluetoothd.strap

    static let serviceInterface = DBusInterface(
        "org.bluez.GattService1",
        properties: [DBusProperty("UUID", .string), DBusProperty("Device", .objectPath), DBusProperty("Primary", .boolean)])
    static let characteristicInterface = DBusInterface(
        "org.bluez.GattCharacteristic1",
        properties: [DBusProperty("UUID", .string), DBusProperty("Service", .objectPath), DBusProperty("Flags", .array(.string))])

    /// A linked strap whose services are resolved, with its heart-rate service and only its
    /// body-sensor-location characteristic exported so far.
    static func bluetoothd(on bus: PrivateBus) async throws -> DBusConnection {
        let connection = try await StandInBluetoothd.connect(to: bus, threadName: "late-gatt")
        try await StandInBluetoothd.exportStrap(on: connection, state: ["Connected": .boolean(true), "ServicesResolved": .boolean(true)])
        try await connection.export(
            serviceInterface,
            properties: ["UUID": .string(heartRateService), "Device": .objectPath(StandInBluetoothd.device), "Primary": .boolean(true)],
            at: service)
        try await exportCharacteristic(bodySensorLocation, at: "char000d", flags: ["read"], on: connection)
        try await StandInBluetoothd.takeBlueZName(on: connection)
        return connection
    }

    static func exportCharacteristic(_ uuid: String, at name: String, flags: [String], on connection: DBusConnection) async throws {
        try await connection.export(
            characteristicInterface,
            properties: ["UUID": .string(uuid), "Service": .objectPath(service), "Flags": .stringArray(flags)],
            at: try service.appending(name))
    }

    @Test func theWaitAfterServicesResolvedIsForTheRequiredCharacteristics() async throws {
        let bus = try PrivateBus()
        let bluetoothd = try await Self.bluetoothd(on: bus)
        let parts = try await TransportParts.start(on: bus)
        defer { parts.poller.stop() }
        let transport = BlueZDeviceTransport(client: parts.client, poller: parts.poller, gattSettleTimeout: .seconds(10))

        let requirement = GATTRequirement(services: [Self.heartRateService], characteristics: [Self.heartRate])
        let wait = Task { () async -> Result<Set<String>, TransportFailure> in
            do throws(TransportFailure) {
                return .success(try await transport.awaitServices(Self.strap, on: nil, requiring: requirement).characteristics)
            } catch {
                return .failure(error)
            }
        }
        // bluetoothd exports the required characteristic a moment after it said the services were
        // resolved (the race itself, not a synchronisation: the wait must not end before it).
        try await Task.sleep(for: .milliseconds(300))
        try await Self.exportCharacteristic(Self.heartRate, at: "char000b", flags: ["notify"], on: bluetoothd)

        let characteristics = try await wait.value.get()
        #expect(characteristics == [Self.heartRate, Self.bodySensorLocation], "the required characteristic was waited for")
        await parts.client.stop()
        await bluetoothd.close()
    }

    @Test func withNothingRequiredTheFirstCharacteristicIsEnough() async throws {
        let bus = try PrivateBus()
        let bluetoothd = try await Self.bluetoothd(on: bus)
        let parts = try await TransportParts.start(on: bus)
        defer { parts.poller.stop() }
        // A settle timeout far beyond the test's own: an answer means the wait did not use it.
        let transport = BlueZDeviceTransport(client: parts.client, poller: parts.poller, gattSettleTimeout: .seconds(600))
        let characteristics = try await withTimeout(.seconds(10), "the services") { () async throws -> Set<String> in
            do throws(TransportFailure) {
                return try await transport.awaitServices(Self.strap, on: nil, requiring: GATTRequirement()).characteristics
            } catch {
                throw error
            }
        }
        #expect(characteristics == [Self.bodySensorLocation])
        await parts.client.stop()
        await bluetoothd.close()
    }
}
