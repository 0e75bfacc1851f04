// Thermometers send a FLOAT whose unit is a flag, so the unit travels with the number and is never
// assumed.

/// The Temperature Measurement (0x2A1C) and Intermediate Temperature (0x2A1E) characteristics,
/// which share one layout.
///
/// Layout: Flags (1); Temperature (4, IEEE 11073 FLOAT, in `unit`); Time Stamp (7, Date Time)
/// when `timestampPresent`; Temperature Type (1) when `temperatureTypePresent`.
public struct TemperatureMeasurement: Hashable, Sendable {
    /// The Flags field.
    public struct Flags: OptionSet, Hashable, Sendable {
        public let rawValue: UInt8
        public init(rawValue: UInt8) { self.rawValue = rawValue }

        /// Set: Fahrenheit; clear: Celsius.
        public static let unitFahrenheit = Flags(rawValue: 1 << 0)
        public static let timestampPresent = Flags(rawValue: 1 << 1)
        public static let temperatureTypePresent = Flags(rawValue: 1 << 2)
    }

    /// The temperature unit, from the `unitFahrenheit` flag; raw values are the rendering.
    public enum Unit: String, Hashable, Sendable {
        case celsius, fahrenheit
    }

    /// Where the temperature was taken. 0 and 10...255 are reserved and decode to `.reserved`.
    public enum TemperatureType: Hashable, Sendable {
        case armpit, body, ear, finger, gastrointestinalTract, mouth, rectum, toe, tympanum
        case reserved(UInt8)

        private static let known: [TemperatureType] = [
            .armpit, .body, .ear, .finger, .gastrointestinalTract, .mouth, .rectum, .toe, .tympanum,
        ]
        private static let names = [
            "armpit", "body", "ear", "finger", "gastrointestinal_tract", "mouth", "rectum", "toe", "tympanum",
        ]

        public init(rawValue: UInt8) {
            let index = Int(rawValue) - 1
            self = Self.known.indices.contains(index) ? Self.known[index] : .reserved(rawValue)
        }

        public var rawValue: UInt8 {
            if case .reserved(let value) = self { return value }
            return UInt8(Self.known.firstIndex(of: self) ?? 0) + 1
        }

        public var name: String {
            if case .reserved(let value) = self { return "reserved_\(value)" }
            return Self.names[Int(rawValue) - 1]
        }
    }

    public var temperature: MedicalFloat
    public var unit: Unit
    public var timestamp: DateTime?
    public var temperatureType: TemperatureType?

    public init(temperature: MedicalFloat, unit: Unit, timestamp: DateTime? = nil, temperatureType: TemperatureType? = nil) {
        self.temperature = temperature
        self.unit = unit
        self.timestamp = timestamp
        self.temperatureType = temperatureType
    }

    /// The flags `encode()` writes.
    public var flags: Flags {
        var flags: Flags = []
        if unit == .fahrenheit { flags.insert(.unitFahrenheit) }
        if timestamp != nil { flags.insert(.timestampPresent) }
        if temperatureType != nil { flags.insert(.temperatureTypePresent) }
        return flags
    }

    public static func decode(_ bytes: some Collection<UInt8>) throws(GATTDecodeError) -> TemperatureMeasurement {
        var reader = ByteReader(bytes)
        let flags = try Flags(rawValue: reader.readUInt8("flags"))
        let temperature = try reader.readFLOAT("temperature")
        let timestamp = flags.contains(.timestampPresent) ? try DateTime.read(from: &reader) : nil
        let type = flags.contains(.temperatureTypePresent)
            ? try TemperatureType(rawValue: reader.readUInt8("temperature_type")) : nil
        return TemperatureMeasurement(
            temperature: temperature, unit: flags.contains(.unitFahrenheit) ? .fahrenheit : .celsius,
            timestamp: timestamp, temperatureType: type)
    }

    public func encode() throws(GATTEncodeError) -> [UInt8] {
        var writer = ByteWriter(capacity: 13)
        writer.writeUInt8(flags.rawValue)
        try writer.writeFLOAT(temperature, field: "temperature")
        timestamp?.write(to: &writer)
        if let temperatureType { writer.writeUInt8(temperatureType.rawValue) }
        return writer.bytes
    }
}

extension TemperatureMeasurement: KeyValueRenderable {
    public var keyValuePairs: [(key: String, value: String)] {
        var pairs: [(key: String, value: String)] = [
            ("temperature", temperature.description), ("temperature_unit", unit.rawValue),
        ]
        if let timestamp { pairs.append(("timestamp", timestamp.description)) }
        if let temperatureType { pairs.append(("temperature_type", temperatureType.name)) }
        return pairs
    }

    public var summary: String {
        var text = "\(temperature) °\(unit == .celsius ? "C" : "F")"
        if let temperatureType { text += " (\(temperatureType.name))" }
        return text
    }
}
