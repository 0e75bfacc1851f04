import BlueZ
import DBus
import Testing
import TestSupport

/// The value fast path: `Value`-only changes of a characteristic go to the value handler, on the
/// connection's thread, and not through `events`.
@Suite("The BlueZ client's characteristic values")
struct BlueZClientValueTests {
    static let characteristicInterface = DBusInterface(
        "org.bluez.GattCharacteristic1",
        properties: [DBusProperty("UUID", .string), DBusProperty("Value", .array(.byte)), DBusProperty("Notifying", .boolean)])

    @Test func valuesGoToTheHandlerAndOtherChangesToEvents() async throws {
        let bus = try PrivateBus()
        let bluetoothd = try await FakeBluetoothd.start(on: bus, devices: 1)
        let device = FakeBluetoothd.devicePath(0)
        let characteristic = try device.appending("service000a").appending("char000b")
        try await bluetoothd.connection.export(
            Self.characteristicInterface,
            properties: ["UUID": .string("00002A37-0000-1000-8000-00805F9B34FB"), "Value": .bytes([]), "Notifying": .boolean(false)],
            at: characteristic)

        let client = BlueZClient(connection: try await DBusConnection.connect(to: .address(bus.address)))
        let (values, valueSink) = AsyncStream<BlueZCharacteristicValue>.makeStream()
        await client.setValueHandler { valueSink.yield($0) }
        try await client.start()
        let events = client.events

        try await bluetoothd.connection.setProperty("Value", to: .bytes([0x06, 72]), of: "org.bluez.GattCharacteristic1", at: characteristic)
        let value = try await values.first(within: .seconds(5), "the value") { _ in true }
        #expect(value.bytes == [0x06, 72])
        #expect(value.uuid == "00002a37-0000-1000-8000-00805f9b34fb")
        #expect(value.devicePath == device)
        #expect(value.address == "AA:BB:CC:DD:EE:00")

        // Anything else about the characteristic still updates the mirror and makes an event.
        try await bluetoothd.connection.setProperty("Notifying", to: .boolean(true), of: "org.bluez.GattCharacteristic1", at: characteristic)
        let event = try await events.first(within: .seconds(5), "the Notifying change") {
            if case .propertiesChanged(let path, _, _, _) = $0 { return path == characteristic }
            return false
        }
        guard case .propertiesChanged(_, _, let changed, _) = event else { return }
        #expect(changed["Value"] == nil, "the value went to the handler, not to events")
        #expect(changed["Notifying"] == .boolean(true))
        await client.stop()
    }
}
