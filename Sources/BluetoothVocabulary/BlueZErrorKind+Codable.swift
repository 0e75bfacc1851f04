extension BlueZErrorKind: Codable {
    /// Recorded as its D-Bus name (`dbusName`), read back with `init(dbusName:)`: every kind
    /// round-trips (`.other` as the bus's generic `Failed`), and an unknown name is `.other`,
    /// as it is when bluetoothd sends one.
    public init(from decoder: any Decoder) throws {
        self.init(dbusName: try decoder.singleValueContainer().decode(String.self))
    }

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.singleValueContainer()
        try container.encode(dbusName)
    }
}
