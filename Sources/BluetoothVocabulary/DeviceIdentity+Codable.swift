// Identities are recorded the way people read them (the journal, `wearfleetctl replay`): an
// address as BlueZ spells it, a random-address device with a `/random` suffix, an adapter by
// its kernel name. Decoding validates, so a damaged record is an error, never a bad identity.

extension BluetoothAddress: Codable {
    /// `AA:BB:CC:DD:EE:FF`; anything else does not decode.
    public init(from decoder: any Decoder) throws {
        let container = try decoder.singleValueContainer()
        let text = try container.decode(String.self)
        guard let address = BluetoothAddress(text) else {
            throw DecodingError.dataCorruptedError(in: container, debugDescription: "not a Bluetooth address: \(text)")
        }
        self = address
    }

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.singleValueContainer()
        try container.encode(description)
    }
}

extension AddressType: Codable {}

extension DeviceID: Codable {
    /// `AA:BB:CC:DD:EE:FF` for a public address, `AA:BB:CC:DD:EE:FF/random` for a random one.
    public init(from decoder: any Decoder) throws {
        let container = try decoder.singleValueContainer()
        let text = try container.decode(String.self)
        let parts = text.split(separator: "/", maxSplits: 1, omittingEmptySubsequences: false)
        guard let address = parts.first.flatMap({ BluetoothAddress($0) }),
            let type = parts.count == 2 ? AddressType(rawValue: String(parts[1])) : .public
        else {
            throw DecodingError.dataCorruptedError(in: container, debugDescription: "not a device identity: \(text)")
        }
        self.init(address: address, addressType: type)
    }

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.singleValueContainer()
        try container.encode(addressType == .public ? address.description : "\(address)/\(addressType.rawValue)")
    }
}

extension AdapterID: Codable {
    /// The kernel name (`hci0`).
    public init(from decoder: any Decoder) throws {
        self.init(try decoder.singleValueContainer().decode(String.self))
    }

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.singleValueContainer()
        try container.encode(name)
    }
}
