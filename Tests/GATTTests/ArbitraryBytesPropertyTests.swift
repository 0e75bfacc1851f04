import PropertyBased
import Testing
@testable import GATT

/// Arbitrary payloads must never crash a decoder: each either decodes or throws a
/// `GATTDecodeError` that points inside the payload.
@Suite struct ArbitraryBytesPropertyTests {
    static let uuids = CharacteristicRegistry.standard.registeredUUIDs
    static let payloads = Gen.uint8().array(of: 0...40)
    /// Mostly characters a UUID spelling uses, so some generated strings parse.
    static let uuidish = Gen<Character?>.element(of: Array("0123456789abcdefABCDEF0000xX--+ g"))

    @Test(arguments: uuids)
    func arbitraryBytesNeverCrashTheDecoder(uuid: BluetoothUUID) async {
        await propertyCheck(count: 500, input: Self.payloads) { bytes in
            do throws(GATTDecodeError) {
                let event = try CharacteristicRegistry.standard.decode(bytes, from: uuid)
                #expect(!event.summary.isEmpty)
                _ = event.keyValuePairs
            } catch {
                #expect(error.offset <= bytes.count)
            }
        }
    }

    @Test(arguments: uuids)
    func decodedEventsReencodeToAnEquivalentPayload(uuid: BluetoothUUID) async {
        await propertyCheck(count: 500, input: Self.payloads) { bytes in
            guard let event = try? CharacteristicRegistry.standard.decode(bytes, from: uuid) else { return }
            let reencoded = try event.encode()
            #expect(try CharacteristicRegistry.standard.decode(reencoded, from: uuid) == event)
            #expect(reencoded.count <= bytes.count)
        }
    }

    @Test func arbitraryTextNeverCrashesTheUUIDParser() async {
        await propertyCheck(count: 500, input: Self.uuidish.array(of: 0...40)) { characters in
            let text = String(characters.compactMap { $0 })
            if let uuid = BluetoothUUID(text) {
                #expect(BluetoothUUID(uuid.description) == uuid)
            }
        }
    }
}
