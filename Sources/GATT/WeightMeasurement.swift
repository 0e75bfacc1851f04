// Scales pick SI or imperial with one flag that changes the resolution of two fields; keeping the
// raw integers plus the unit system means the value logged is exactly the value sent.

/// The Weight Measurement characteristic (0x2A9D).
///
/// Layout: Flags (1); Weight (2; SI 0.005 kg, imperial 0.01 lb; 0xFFFF = measurement
/// unsuccessful); Time Stamp (7, Date Time) when `timestampPresent`; User ID (1, 255 = unknown)
/// when `userIDPresent`; BMI (2, 0.1 kg/m²) and Height (2; SI 0.001 m, imperial 0.1 in) when
/// `bmiAndHeightPresent`.
public struct WeightMeasurement: Hashable, Sendable {
    /// The Flags field.
    public struct Flags: OptionSet, Hashable, Sendable {
        public let rawValue: UInt8
        public init(rawValue: UInt8) { self.rawValue = rawValue }

        /// Set: imperial (lb, in); clear: SI (kg, m).
        public static let imperialUnits = Flags(rawValue: 1 << 0)
        public static let timestampPresent = Flags(rawValue: 1 << 1)
        public static let userIDPresent = Flags(rawValue: 1 << 2)
        public static let bmiAndHeightPresent = Flags(rawValue: 1 << 3)
    }

    /// SI (kg, m) or imperial (lb, in), from the `imperialUnits` flag.
    public enum UnitSystem: String, Hashable, Sendable {
        case si, imperial
    }

    /// BMI (0.1 kg/m²) and height (SI 0.001 m, imperial 0.1 in), raw.
    public struct BMIAndHeight: Hashable, Sendable {
        public var bmiRaw: UInt16
        public var heightRaw: UInt16
        public init(bmiRaw: UInt16, heightRaw: UInt16) {
            self.bmiRaw = bmiRaw
            self.heightRaw = heightRaw
        }
        public var bmi: Double { Double(bmiRaw) / 10 }
    }

    /// The wire value that means "measurement unsuccessful".
    public static let unsuccessfulWeightRaw: UInt16 = 0xFFFF

    public var unitSystem: UnitSystem
    /// Raw weight in 0.005 kg (SI) or 0.01 lb (imperial); nil when the scale reported
    /// "measurement unsuccessful".
    public var weightRaw: UInt16?
    public var timestamp: DateTime?
    /// 255 means "unknown user".
    public var userID: UInt8?
    public var bmiAndHeight: BMIAndHeight?

    public init(
        unitSystem: UnitSystem, weightRaw: UInt16?, timestamp: DateTime? = nil, userID: UInt8? = nil,
        bmiAndHeight: BMIAndHeight? = nil
    ) {
        self.unitSystem = unitSystem
        self.weightRaw = weightRaw
        self.timestamp = timestamp
        self.userID = userID
        self.bmiAndHeight = bmiAndHeight
    }

    /// Weight in kg (SI) or lb (imperial).
    public var weight: Double? {
        weightRaw.map { unitSystem == .si ? Double($0) * 0.005 : Double($0) * 0.01 }
    }

    /// Height in m (SI) or in (imperial).
    public var height: Double? {
        bmiAndHeight.map { unitSystem == .si ? Double($0.heightRaw) / 1000 : Double($0.heightRaw) / 10 }
    }

    /// The flags `encode()` writes.
    public var flags: Flags {
        var flags: Flags = []
        if unitSystem == .imperial { flags.insert(.imperialUnits) }
        if timestamp != nil { flags.insert(.timestampPresent) }
        if userID != nil { flags.insert(.userIDPresent) }
        if bmiAndHeight != nil { flags.insert(.bmiAndHeightPresent) }
        return flags
    }

    public static func decode(_ bytes: some Collection<UInt8>) throws(GATTDecodeError) -> WeightMeasurement {
        var reader = ByteReader(bytes)
        let flags = try Flags(rawValue: reader.readUInt8("flags"))
        let weight = try reader.readUInt16("weight")
        let timestamp = flags.contains(.timestampPresent) ? try DateTime.read(from: &reader) : nil
        let user = flags.contains(.userIDPresent) ? try reader.readUInt8("user_id") : nil
        var bmiAndHeight: BMIAndHeight?
        if flags.contains(.bmiAndHeightPresent) {
            let bmi = try reader.readUInt16("bmi")
            let height = try reader.readUInt16("height")
            bmiAndHeight = BMIAndHeight(bmiRaw: bmi, heightRaw: height)
        }
        return WeightMeasurement(
            unitSystem: flags.contains(.imperialUnits) ? .imperial : .si,
            weightRaw: weight == unsuccessfulWeightRaw ? nil : weight,
            timestamp: timestamp, userID: user, bmiAndHeight: bmiAndHeight)
    }

    public func encode() -> [UInt8] {
        var writer = ByteWriter(capacity: 15)
        writer.writeUInt8(flags.rawValue)
        writer.writeUInt16(weightRaw ?? Self.unsuccessfulWeightRaw)
        timestamp?.write(to: &writer)
        if let userID { writer.writeUInt8(userID) }
        if let bmiAndHeight {
            writer.writeUInt16(bmiAndHeight.bmiRaw)
            writer.writeUInt16(bmiAndHeight.heightRaw)
        }
        return writer.bytes
    }
}

extension WeightMeasurement: KeyValueRenderable {
    private var weightText: String? {
        weightRaw.map {
            unitSystem == .si
                ? DecimalText.scaled(Int64($0) * 5, exponent: -3) : DecimalText.scaled(Int64($0), exponent: -2)
        }
    }

    public var keyValuePairs: [(key: String, value: String)] {
        var pairs: [(key: String, value: String)] = [
            ("weight", weightText ?? "unsuccessful"), ("weight_unit", unitSystem == .si ? "kg" : "lb"),
        ]
        if let timestamp { pairs.append(("timestamp", timestamp.description)) }
        if let userID { pairs.append(("user_id", userID == 0xFF ? "unknown" : String(userID))) }
        if let bmiAndHeight {
            pairs.append(("bmi_kg_per_m2", DecimalText.scaled(Int64(bmiAndHeight.bmiRaw), exponent: -1)))
            let height = unitSystem == .si
                ? DecimalText.scaled(Int64(bmiAndHeight.heightRaw), exponent: -3)
                : DecimalText.scaled(Int64(bmiAndHeight.heightRaw), exponent: -1)
            pairs.append(("height", height))
            pairs.append(("height_unit", unitSystem == .si ? "m" : "in"))
        }
        return pairs
    }

    public var summary: String {
        guard let weightText else { return "weight measurement unsuccessful" }
        return "\(weightText) \(unitSystem == .si ? "kg" : "lb")"
    }
}
