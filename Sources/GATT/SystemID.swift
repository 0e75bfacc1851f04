// System ID ties a device to its manufacturer's numbering; rendered in hex as it is printed on
// labels and in vendor tools.

/// The System ID characteristic (0x2A23): a 40-bit manufacturer-defined identifier followed by a
/// 24-bit IEEE Organizationally Unique Identifier, 8 bytes, little-endian.
public struct SystemID: Hashable, Sendable {
    /// 40 bits.
    public var manufacturerIdentifier: UInt64
    /// 24 bits.
    public var organizationallyUniqueIdentifier: UInt32

    public init(manufacturerIdentifier: UInt64, organizationallyUniqueIdentifier: UInt32) {
        self.manufacturerIdentifier = manufacturerIdentifier
        self.organizationallyUniqueIdentifier = organizationallyUniqueIdentifier
    }

    public static func decode(_ bytes: some Collection<UInt8>) throws(GATTDecodeError) -> SystemID {
        var reader = ByteReader(bytes)
        let manufacturer = try reader.readUInt40("manufacturer_identifier")
        let oui = try reader.readUInt24("organizationally_unique_identifier")
        return SystemID(manufacturerIdentifier: manufacturer, organizationallyUniqueIdentifier: oui)
    }

    public func encode() throws(GATTEncodeError) -> [UInt8] {
        var writer = ByteWriter(capacity: 8)
        try writer.writeUInt40(manufacturerIdentifier, field: "manufacturer_identifier")
        try writer.writeUInt24(organizationallyUniqueIdentifier, field: "organizationally_unique_identifier")
        return writer.bytes
    }
}

extension SystemID: KeyValueRenderable {
    public var keyValuePairs: [(key: String, value: String)] {
        [
            ("manufacturer_identifier", DecimalText.hex(manufacturerIdentifier, digits: 10)),
            ("organizationally_unique_identifier", DecimalText.hex(UInt64(organizationallyUniqueIdentifier), digits: 6)),
        ]
    }

    public var summary: String {
        "system id \(DecimalText.hex(UInt64(organizationallyUniqueIdentifier), digits: 6))-\(DecimalText.hex(manufacturerIdentifier, digits: 10))"
    }
}
