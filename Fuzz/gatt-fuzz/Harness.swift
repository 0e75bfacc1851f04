// The checks every fuzz input and every replayed file go through: decoding must either succeed
// with a value that renders and round-trips, or fail with an error pointing inside the payload.
// A violation traps, which libFuzzer records as a crash with the input that caused it.
import GATT

/// Runs one payload through one decoder and checks the decoder's guarantees.
enum Harness {
    /// Every characteristic the standard registry decodes, in UUID order (stable across runs,
    /// so a selector byte always picks the same decoder).
    static let uuids = CharacteristicRegistry.standard.registeredUUIDs

    static func exercise(_ payload: ArraySlice<UInt8>, as uuid: BluetoothUUID) -> Result<CharacteristicEvent, GATTDecodeError> {
        do throws(GATTDecodeError) {
            let event = try CharacteristicRegistry.standard.decode(payload, from: uuid)
            precondition(!event.summary.isEmpty, "empty summary for \(event)")
            for (key, _) in event.keyValuePairs {
                precondition(!key.isEmpty, "empty key for \(event)")
            }
            guard let reencoded = try? event.encode() else {
                preconditionFailure("decoded event does not re-encode: \(event)")
            }
            let again = try? CharacteristicRegistry.standard.decode(reencoded, from: uuid)
            precondition(again == event, "re-encoded event decodes differently: \(event)")
            return .success(event)
        } catch {
            precondition(error.offset >= 0 && error.offset <= payload.count, "error offset outside payload: \(error)")
            return .failure(error)
        }
    }

    /// Parses a decoder selection (`2a37`, `0x2A37` or the 128-bit form); nil when not registered.
    static func registeredUUID(_ text: String) -> BluetoothUUID? {
        guard let uuid = BluetoothUUID(text), uuids.contains(uuid) else { return nil }
        return uuid
    }
}
