import Testing
@testable import GATT

@Suite struct BluetoothUUIDTests {
    @Test(arguments: ["2a37", "2A37", "0x2A37", "0x2a37", "00002a37", "00002a37-0000-1000-8000-00805f9b34fb",
                      "00002A37-0000-1000-8000-00805F9B34FB", "00002a3700001000800000805f9b34fb"])
    func everySpellingParsesToTheSameUUID(text: String) {
        #expect(BluetoothUUID(text) == BluetoothUUID(0x2A37))
    }

    @Test func descriptionIsLowerCase128BitAsBlueZPrintsIt() {
        #expect(BluetoothUUID(0x180D).description == "0000180d-0000-1000-8000-00805f9b34fb")
    }

    @Test func shortFormIsRecoveredFromTheFullForm() {
        #expect(BluetoothUUID("0000180f-0000-1000-8000-00805f9b34fb")?.uuid16 == 0x180F)
        #expect(BluetoothUUID(0x2A19).shortDescription == "0x2a19")
    }

    @Test func vendorUUIDHasNoShortForm() throws {
        let uuid = try #require(BluetoothUUID("6e400001-b5a3-f393-e0a9-e50e24dcca9e"))
        #expect(uuid.uuid16 == nil)
        #expect(uuid.description == "6e400001-b5a3-f393-e0a9-e50e24dcca9e")
    }

    @Test func thirtyTwoBitFormExpandsWithTheBaseUUID() {
        #expect(BluetoothUUID("12345678")?.description == "12345678-0000-1000-8000-00805f9b34fb")
        #expect(BluetoothUUID(uuid32: 0x1234_5678).uuid16 == nil)
    }

    @Test(arguments: ["", "2a3", "2a37a", "+a37", "0x", "zz37", "0x00002a37-0000-1000-8000-00805f9b34fb",
                      "00002a37-0000-1000-8000_00805f9b34fb", "00002a37-00001-000-8000-00805f9b34fb", "-2a37"])
    func rejectsMalformedText(text: String) {
        #expect(BluetoothUUID(text) == nil)
    }

    @Test func wellKnownServicesHaveTheirAssignedNumbers() {
        #expect(BluetoothUUID.heartRateService.uuid16 == 0x180D)
        #expect(BluetoothUUID.batteryService.uuid16 == 0x180F)
        #expect(BluetoothUUID.deviceInformationService.uuid16 == 0x180A)
        #expect(BluetoothUUID.healthThermometerService.uuid16 == 0x1809)
        #expect(BluetoothUUID.pulseOximeterService.uuid16 == 0x1822)
    }
}
