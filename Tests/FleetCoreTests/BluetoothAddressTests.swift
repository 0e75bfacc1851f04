import FleetCore
import Testing

@Suite("Bluetooth addresses")
struct BluetoothAddressTests {
    @Test func parsesBothCasesAndPrintsUpperCase() throws {
        let address = try #require(BluetoothAddress("c0:ff:EE:0a:1B:2c"))
        #expect(address.bytes == [0xC0, 0xFF, 0xEE, 0x0A, 0x1B, 0x2C])
        #expect(address.description == "C0:FF:EE:0A:1B:2C")
    }

    @Test(arguments: [
        "", "C0:FF:EE:0A:1B", "C0:FF:EE:0A:1B:2", "C0:FF:EE:0A:1B:2C0", "C0:FF:EE:0A:1B:2C:", "C0-FF-EE-0A-1B-2C",
        "C0:FF:EE:0A:1B:2G", "C0:FF:EE:0A:1B::2", "C0FF:EE:0A:1B:2C:", " C0:FF:EE:0A:1B:2C", "C0:FF:EE:0A:1B:2C ", "Ç0:FF:EE:0A:1B:2C",
    ])
    func rejectsAnythingElse(text: String) {
        #expect(BluetoothAddress(text) == nil)
    }

    @Test func everyAddressSurvivesPrintingAndParsing() {
        var generator = SystemRandomNumberGenerator()
        for _ in 0..<1000 {
            let bytes = (0..<6).map { _ in UInt8.random(in: .min ... .max, using: &generator) }
            let address = BluetoothAddress(bytes: bytes)
            #expect(address.flatMap { BluetoothAddress($0.description) } == address)
            #expect(address.flatMap { BluetoothAddress($0.description.lowercased()) } == address)
        }
    }
}
