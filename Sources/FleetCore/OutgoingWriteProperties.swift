/// The write-related flags of a GATT characteristic (`GattCharacteristic1.Flags`: `write`,
/// `write-without-response`).
public struct OutgoingWriteProperties: OptionSet, Hashable, Sendable {
    public let rawValue: UInt8

    public init(rawValue: UInt8) { self.rawValue = rawValue }

    public static let write = OutgoingWriteProperties(rawValue: 1 << 0)
    public static let writeWithoutResponse = OutgoingWriteProperties(rawValue: 1 << 1)
}
