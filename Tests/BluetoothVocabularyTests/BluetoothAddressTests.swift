import BluetoothVocabulary
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
            #expect(address?.bytes == bytes)
        }
    }

    /// Addresses sort as their bytes do, first written byte first (the state file and the
    /// status table list devices in this order).
    @Test func ordersAsTheWrittenBytes() throws {
        var generator = SystemRandomNumberGenerator()
        for _ in 0..<1000 {
            let left = (0..<6).map { _ in UInt8.random(in: 0...3, using: &generator) }
            let right = (0..<6).map { _ in UInt8.random(in: 0...3, using: &generator) }
            let a = try #require(BluetoothAddress(bytes: left)), b = try #require(BluetoothAddress(bytes: right))
            #expect((a < b) == left.lexicographicallyPrecedes(right))
            #expect((a == b) == (left == right))
        }
        #expect(BluetoothAddress(bytes: [0xFF, 0, 0, 0, 0, 0])! > BluetoothAddress(bytes: [0xFE, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF])!)
    }
}
