// Read once after connecting, to label a heart-rate stream by where the sensor sits.

/// The Body Sensor Location characteristic (0x2A38): one byte. Values 7...255 are reserved by
/// the specification and decode to `.reserved(value)` rather than failing, so a newer device
/// still connects.
public enum BodySensorLocation: Hashable, Sendable {
    case other, chest, wrist, finger, hand, earLobe, foot
    case reserved(UInt8)

    public init(rawValue: UInt8) {
        switch rawValue {
        case 0: self = .other
        case 1: self = .chest
        case 2: self = .wrist
        case 3: self = .finger
        case 4: self = .hand
        case 5: self = .earLobe
        case 6: self = .foot
        default: self = .reserved(rawValue)
        }
    }

    public var rawValue: UInt8 {
        switch self {
        case .other: 0
        case .chest: 1
        case .wrist: 2
        case .finger: 3
        case .hand: 4
        case .earLobe: 5
        case .foot: 6
        case .reserved(let value): value
        }
    }

    public static func decode(_ bytes: some Collection<UInt8>) throws(GATTDecodeError) -> BodySensorLocation {
        var reader = ByteReader(bytes)
        return try BodySensorLocation(rawValue: reader.readUInt8("body_sensor_location"))
    }

    public func encode() -> [UInt8] { [rawValue] }

    /// snake_case name: `chest`, `ear_lobe`, `reserved_9`.
    public var name: String {
        switch self {
        case .other: "other"
        case .chest: "chest"
        case .wrist: "wrist"
        case .finger: "finger"
        case .hand: "hand"
        case .earLobe: "ear_lobe"
        case .foot: "foot"
        case .reserved(let value): "reserved_\(value)"
        }
    }
}

extension BodySensorLocation: KeyValueRenderable {
    public var keyValuePairs: [(key: String, value: String)] { [("body_sensor_location", name)] }
    public var summary: String { "sensor on \(name)" }
}
