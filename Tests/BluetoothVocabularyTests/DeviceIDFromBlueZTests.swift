import BluetoothVocabulary
import Testing

@Suite("Device identity from BlueZ's properties")
struct DeviceIDFromBlueZTests {
    let address = BluetoothAddress("AA:BB:CC:DD:EE:01")

    @Test func addressAndTypeMakeTheIdentity() {
        #expect(DeviceID(bluezAddress: "aa:bb:cc:dd:ee:01", addressType: "random")?.addressType == .random)
        #expect(DeviceID(bluezAddress: "AA:BB:CC:DD:EE:01", addressType: "random")?.address == address)
    }

    @Test(arguments: [nil, "public", "le-public-ish"])
    func aMissingOrUnknownTypeIsPublic(type: String?) {
        #expect(DeviceID(bluezAddress: "AA:BB:CC:DD:EE:01", addressType: type)?.addressType == .public)
    }

    @Test(arguments: [nil, "", "AA:BB:CC:DD:EE", "not an address"])
    func noValidAddressIsNoIdentity(text: String?) {
        #expect(DeviceID(bluezAddress: text, addressType: "public") == nil)
    }
}
