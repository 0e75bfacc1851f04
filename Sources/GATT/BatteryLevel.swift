// Battery level drives fleet alerts; a reserved value (above 100) is reported as an error rather
// than clamped, because clamping would hide a misbehaving device.

/// The Battery Level characteristic (0x2A19): one byte, 0...100 percent. 101...255 are reserved
/// and decoding them throws `.outOfRange`.
public struct BatteryLevel: Hashable, Sendable {
    public let percent: UInt8

    /// Nil when `percent` is above 100.
    public init?(percent: UInt8) {
        guard percent <= 100 else { return nil }
        self.percent = percent
    }

    public static func decode(_ bytes: some Collection<UInt8>) throws(GATTDecodeError) -> BatteryLevel {
        var reader = ByteReader(bytes)
        let value = try reader.readUInt8("battery_level")
        guard let level = BatteryLevel(percent: value) else {
            throw GATTDecodeError(field: "battery_level", offset: 0, reason: .outOfRange(value: UInt64(value)))
        }
        return level
    }

    public func encode() -> [UInt8] { [percent] }
}

extension BatteryLevel: KeyValueRenderable {
    public var keyValuePairs: [(key: String, value: String)] { [("battery_level_percent", String(percent))] }
    public var summary: String { "battery \(percent)%" }
}
