import DBus
import Fleet
import FleetControl
import FleetCore
import Testing

@Suite("The watch filter")
struct WatchFilterTests {
    @Test func theEmptyFilterTakesEverything() throws {
        let filter = try WatchFilter(properties: [:])
        #expect(filter == WatchFilter())
        #expect(filter.addresses == nil && filter.characteristics == nil && filter.states && filter.buffer == 1024)
    }

    @Test func devicesAndCharacteristicsAreNormalised() throws {
        let filter = try WatchFilter(properties: [
            "Devices": .stringArray(["aa:bb:cc:00:00:01", "AA:BB:CC:00:00:01"]),
            "Characteristics": .stringArray(["2a37", "0x2A19", "00002A38-0000-1000-8000-00805F9B34FB"]),
            "States": .boolean(false), "Buffer": .uint32(16),
        ])
        #expect(filter.addresses == [BluetoothAddress("AA:BB:CC:00:00:01")!])
        #expect(filter.characteristics == [
            "00002a37-0000-1000-8000-00805f9b34fb", "00002a19-0000-1000-8000-00805f9b34fb", "00002a38-0000-1000-8000-00805f9b34fb",
        ])
        #expect(!filter.states && filter.buffer == 16)
    }

    @Test(arguments: [
        ["Devices": DBusValue.stringArray(["AA:BB:CC"])],
        ["Devices": .uint32(1)],
        ["Characteristics": .stringArray(["not a uuid"])],
        ["States": .uint32(1)],
        ["Buffer": .uint32(15)],
        ["Buffer": .uint32(65537)],
        ["Buffer": .int32(100)],
        ["Unknown": .boolean(true)],
    ] as [[String: DBusValue]])
    func anythingElseIsRefusedByName(_ properties: [String: DBusValue]) {
        #expect {
            _ = try WatchFilter(properties: properties)
        } throws: { error in
            (error as? DBusError)?.name == WearfleetControl.ErrorName.invalidFilter
                && (error as? DBusError)?.message.contains(properties.keys.first ?? "?") == true
        }
    }
}
