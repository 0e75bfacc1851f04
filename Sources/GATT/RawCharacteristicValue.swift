// A characteristic the registry does not know is still worth logging: it is passed on as bytes,
// so adding a device with a vendor characteristic never turns into decode errors.

/// The payload of a characteristic with no registered decoder, kept as received.
public struct RawCharacteristicValue: Hashable, Sendable {
    public var uuid: BluetoothUUID
    public var bytes: [UInt8]

    public init(uuid: BluetoothUUID, bytes: [UInt8]) {
        self.uuid = uuid
        self.bytes = bytes
    }

    /// Lower-case hex, two digits per byte, no separators (empty payload: empty string).
    public var hex: String { DecimalText.hex(bytes: bytes) }
}

extension RawCharacteristicValue: KeyValueRenderable {
    public var keyValuePairs: [(key: String, value: String)] { [("uuid", uuid.description), ("raw_hex", hex)] }

    public var summary: String {
        "\(uuid.shortDescription): \(bytes.count) byte(s) \(bytes.count > 16 ? hex.prefix(32) + "…" : Substring(hex))"
    }
}
