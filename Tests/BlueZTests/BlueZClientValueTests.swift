import BlueZ
import DBus
import Synchronization
import Testing
import TestSupport

/// A value as a receiver got it, with the characteristic it was attributed to.
struct ReceivedValue: Sendable {
    let source: BlueZCharacteristicSource
    let bytes: [UInt8]
}

/// The value fast path: `Value`-only changes of a characteristic go to its value receiver, on
/// the connection's thread, and not through `events`.
@Suite("The BlueZ client's characteristic values")
struct BlueZClientValueTests {
    static let characteristicInterface = DBusInterface(
        "org.bluez.GattCharacteristic1",
        properties: [DBusProperty("UUID", .string), DBusProperty("Value", .array(.byte)), DBusProperty("Notifying", .boolean)])

    @Test func valuesGoToTheReceiverAndOtherChangesToEvents() async throws {
        let fixture = try await CharacteristicFixture.start(notifying: false)
        let (bluetoothd, device, characteristic) = (fixture.bluetoothd, fixture.device, fixture.characteristic)
        let client = BlueZClient(connection: fixture.connection)
        let (values, valueSink) = AsyncStream<ReceivedValue>.makeStream()
        await client.setValueReceivers { source in { bytes in valueSink.yield(ReceivedValue(source: source, bytes: bytes)) } }
        try await client.start()
        let events = client.events

        try await bluetoothd.connection.setProperty("Value", to: .bytes([0x06, 72]), of: "org.bluez.GattCharacteristic1", at: characteristic)
        let value = try await values.first(within: .seconds(5), "the value") { _ in true }
        #expect(value.bytes == [0x06, 72])
        #expect(value.source.uuid == "00002a37-0000-1000-8000-00805f9b34fb")
        #expect(value.source.devicePath == device)
        #expect(value.source.characteristicPath == characteristic)
        #expect(value.source.address == "AA:BB:CC:DD:EE:00")

        // Anything else about the characteristic still updates the mirror and makes an event.
        try await bluetoothd.connection.setProperty("Notifying", to: .boolean(true), of: "org.bluez.GattCharacteristic1", at: characteristic)
        let seen = try await withTimeout(.seconds(5), "the Notifying change") {
            var seen: [BlueZEvent] = []
            for await event in events {
                seen.append(event)
                if case .notifyingChanged(characteristic, notifying: true) = event { break }
            }
            return seen
        }
        #expect(!seen.contains { if case .valueChanged = $0 { true } else { false } }, "the value went to the receiver, not to events")
        #expect(await client.tree.characteristics(of: device).first?.notifying == true)
        await client.stop()
        await fixture.close()
    }
}

/// A fake bluetoothd on a private bus with one device and its heart-rate characteristic
/// (notifying unless asked otherwise), and a connection of the client's own to that bus.
struct CharacteristicFixture {
    let bus: PrivateBus
    let bluetoothd: FakeBluetoothd
    let device: DBusObjectPath
    let characteristic: DBusObjectPath
    let connection: DBusConnection

    static func start(notifying: Bool = true) async throws -> CharacteristicFixture {
        let bus = try PrivateBus()
        let bluetoothd = try await FakeBluetoothd.start(on: bus, devices: 1)
        let device = FakeBluetoothd.devicePath(0)
        let characteristic = try device.appending("service000a").appending("char000b")
        try await bluetoothd.connection.export(
            BlueZClientValueTests.characteristicInterface,
            properties: ["UUID": .string("00002A37-0000-1000-8000-00805F9B34FB"), "Value": .bytes([]), "Notifying": .boolean(notifying)],
            at: characteristic)
        let connection = try await DBusConnection.connect(to: .address(bus.address))
        return CharacteristicFixture(bus: bus, bluetoothd: bluetoothd, device: device, characteristic: characteristic, connection: connection)
    }

    func close() async {
        await connection.close()
        await bluetoothd.connection.close()
    }
}

/// The value fast path reads notifications in place (the connection never decodes them); signals
/// of the same look that are malformed still take the decoding way and are counted.
@Suite("The BlueZ client's value fast path")
struct BlueZClientValueFastPathTests {
    @Test func valuesAreClaimedInOrderAndMalformedSignalsCounted() async throws {
        let fixture = try await CharacteristicFixture.start()
        let (bluetoothd, device, characteristic, connection) = (fixture.bluetoothd, fixture.device, fixture.characteristic, fixture.connection)
        let gatt = "org.bluez.GattCharacteristic1"
        let client = BlueZClient(connection: connection)
        let (values, valueSink) = AsyncStream<ReceivedValue>.makeStream()
        await client.setValueReceivers { source in { bytes in valueSink.yield(ReceivedValue(source: source, bytes: bytes)) } }
        try await client.start()
        let events = client.events

        func propertiesChanged(at path: DBusObjectPath, _ body: [DBusValue]) async throws {
            try await bluetoothd.connection.emitSignal(
                path: path, interface: "org.freedesktop.DBus.Properties", member: "PropertiesChanged", body)
        }
        func notify(_ byte: UInt8) async throws {
            try await bluetoothd.connection.setProperty("Value", to: .bytes([0x06, byte]), of: gatt, at: characteristic)
        }
        for byte in UInt8(60)..<80 { try await notify(byte) }
        // Claimed shape, wrong type: malformed, as it always was.
        try await propertiesChanged(at: characteristic, [.string(gatt), .stringVariantMap(["Value": .string("72 bpm")]), .stringArray([])])
        // No invalidated list: malformed.
        try await propertiesChanged(at: characteristic, [.string(gatt), .stringVariantMap(["Value": .bytes([0x06, 1])])])
        // A characteristic the mirror does not hold: neither a value nor malformed.
        let unknown = try device.appending("service000a").appending("char00ff")
        try await propertiesChanged(at: unknown, [.string(gatt), .stringVariantMap(["Value": .bytes([0x06, 2])]), .stringArray([])])
        try await notify(99)

        let received = try await withTimeout(.seconds(10), "21 values") {
            var received: [[UInt8]] = []
            for await value in values {
                received.append(value.bytes)
                if value.bytes == [0x06, 99] { break }
            }
            return received
        }
        #expect(received == (UInt8(60)..<80).map { [0x06, $0] } + [[0x06, 99]])
        let malformed = try await withTimeout(.seconds(5), "two malformed-signal events") {
            var texts: [String] = []
            for await event in events {
                if case .malformedSignal(let text) = event { texts.append(text) }
                if texts.count == 2 { break }
            }
            return texts
        }
        #expect(malformed.count == 2)
        #expect(await client.malformedSignals == 2)
        #expect(await connection.claimedSignals == 21, "every value was read in place, never decoded")
        valueSink.finish()
        await client.stop()
        await fixture.close()
    }
}

/// The fast path proves a change is `Value` alone from the sizes of the two arrays, without
/// walking them: every size of value is claimed, and every change with anything beside `Value`
/// is not, and takes the normal way whole.
@Suite("The BlueZ client's value fast path: shapes")
struct BlueZClientValueShapeTests {
    @Test func onlyValueAloneIsClaimedWhateverItsSize() async throws {
        let fixture = try await CharacteristicFixture.start()
        let (bluetoothd, characteristic, connection) = (fixture.bluetoothd, fixture.characteristic, fixture.connection)
        let gatt = "org.bluez.GattCharacteristic1"
        let client = BlueZClient(connection: connection)
        let asked = Mutex(0)
        let (values, valueSink) = AsyncStream<[UInt8]>.makeStream()
        await client.setValueReceivers { _ in
            asked.withLock { $0 += 1 }
            return { bytes in valueSink.yield(bytes) }
        }
        try await client.start()
        let events = client.events

        func propertiesChanged(_ changed: [String: DBusValue], invalidated: [String] = []) async throws {
            try await bluetoothd.connection.emitSignal(
                path: characteristic, interface: "org.freedesktop.DBus.Properties", member: "PropertiesChanged",
                [.string(gatt), .stringVariantMap(changed), .stringArray(invalidated)])
        }
        // Every padding the entry can end with, and sizes around the 8-byte alignment of entries.
        let sizes = Array(0...17) + [63, 64, 65, 244, 512]
        for size in sizes { try await propertiesChanged(["Value": .bytes((0..<size).map { UInt8(truncatingIfNeeded: $0 &+ size) })]) }
        // Near misses: something beside `Value`, before or after it, or something invalidated.
        try await propertiesChanged(["Value": .bytes([0x06, 1]), "Notifying": .boolean(true)])
        try await propertiesChanged(["Notifying": .boolean(true), "Value": .bytes([])])
        try await propertiesChanged(["Value": .bytes([0x06, 2])], invalidated: ["Notifying"])
        try await propertiesChanged(["Value": .bytes([0x06, 3]), "A": .bytes([])])
        try await propertiesChanged(["Notifying": .boolean(false)])
        try await propertiesChanged(["Value": .bytes([0x06, 99])])

        let received = try await withTimeout(.seconds(10), "every claimed value") {
            var received: [[UInt8]] = []
            for await bytes in values {
                received.append(bytes)
                if bytes == [0x06, 99] { break }
            }
            return received
        }
        #expect(received == sizes.map { size in (0..<size).map { UInt8(truncatingIfNeeded: $0 &+ size) } } + [[0x06, 99]])
        // The near misses reach the mirror and `events` whole, their values included (the last
        // one, `Notifying` alone, marks the end; an invalidated `Notifying` makes no event).
        let nearMisses = try await withTimeout(.seconds(5), "the near misses as events") {
            var seen: [BlueZEvent] = []
            for await event in events {
                switch event {
                case .valueChanged(let source, _) where source.characteristicPath == characteristic: seen.append(event)
                case .notifyingChanged(characteristic, let notifying):
                    seen.append(event)
                    if !notifying { return seen }
                default: continue
                }
            }
            return seen
        }
        let source = try #require(await client.tree.characteristicSource(at: characteristic))
        #expect(nearMisses == [
            .notifyingChanged(characteristic, notifying: true), .valueChanged(source, bytes: [0x06, 1]),
            .notifyingChanged(characteristic, notifying: true), .valueChanged(source, bytes: []),
            .valueChanged(source, bytes: [0x06, 2]),
            .valueChanged(source, bytes: [0x06, 3]),
            .notifyingChanged(characteristic, notifying: false),
        ])
        #expect(await client.tree.objects[characteristic]?[gatt]?["Value"] == .bytes([0x06, 3]), "a near miss's value is in the mirror")
        #expect(await connection.claimedSignals == sizes.count + 1)
        #expect(asked.withLock { $0 } == 1, "the receivers are asked once per characteristic")
        valueSink.finish()
        await client.stop()
        await fixture.close()
    }
}
