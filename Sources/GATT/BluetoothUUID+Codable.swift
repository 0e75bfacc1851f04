extension BluetoothUUID: Codable {
    /// Recorded in its canonical lower-case 128-bit spelling; any spelling `init(_:)` parses is
    /// read back, anything else does not decode.
    public init(from decoder: any Decoder) throws {
        let container = try decoder.singleValueContainer()
        let text = try container.decode(String.self)
        guard let uuid = BluetoothUUID(text) else {
            throw DecodingError.dataCorruptedError(in: container, debugDescription: "not a Bluetooth UUID: \(text)")
        }
        self = uuid
    }

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.singleValueContainer()
        try container.encode(description)
    }
}
