// A spot-check is one deliberate reading (often stored and sent later), hence its own timestamp
// and the "device clock is not set" flag that says whether that timestamp can be trusted.

/// The PLX Spot-Check Measurement characteristic (0x2A5E).
///
/// Layout: Flags (1); SpO2 (SFLOAT, %), Pulse Rate (SFLOAT, bpm); Timestamp (7, Date Time) when
/// `timestampPresent`; Measurement Status (2) when `measurementStatusPresent`; Device and Sensor
/// Status (3) when `deviceAndSensorStatusPresent`; Pulse Amplitude Index (SFLOAT, %) when
/// `pulseAmplitudeIndexPresent`. `deviceClockNotSet` carries no field.
public struct PLXSpotCheckMeasurement: Hashable, Sendable {
    /// The Flags field.
    public struct Flags: OptionSet, Hashable, Sendable {
        public let rawValue: UInt8
        public init(rawValue: UInt8) { self.rawValue = rawValue }

        public static let timestampPresent = Flags(rawValue: 1 << 0)
        public static let measurementStatusPresent = Flags(rawValue: 1 << 1)
        public static let deviceAndSensorStatusPresent = Flags(rawValue: 1 << 2)
        public static let pulseAmplitudeIndexPresent = Flags(rawValue: 1 << 3)
        public static let deviceClockNotSet = Flags(rawValue: 1 << 4)
    }

    public var reading: PLXReading
    public var timestamp: DateTime?
    public var measurementStatus: PLXMeasurementStatus?
    public var deviceAndSensorStatus: PLXDeviceAndSensorStatus?
    public var pulseAmplitudeIndexPercent: MedicalFloat?
    public var deviceClockNotSet: Bool

    public init(
        reading: PLXReading, timestamp: DateTime? = nil, measurementStatus: PLXMeasurementStatus? = nil,
        deviceAndSensorStatus: PLXDeviceAndSensorStatus? = nil, pulseAmplitudeIndexPercent: MedicalFloat? = nil,
        deviceClockNotSet: Bool = false
    ) {
        self.reading = reading
        self.timestamp = timestamp
        self.measurementStatus = measurementStatus
        self.deviceAndSensorStatus = deviceAndSensorStatus
        self.pulseAmplitudeIndexPercent = pulseAmplitudeIndexPercent
        self.deviceClockNotSet = deviceClockNotSet
    }

    /// The flags `encode()` writes.
    public var flags: Flags {
        var flags: Flags = []
        if timestamp != nil { flags.insert(.timestampPresent) }
        if measurementStatus != nil { flags.insert(.measurementStatusPresent) }
        if deviceAndSensorStatus != nil { flags.insert(.deviceAndSensorStatusPresent) }
        if pulseAmplitudeIndexPercent != nil { flags.insert(.pulseAmplitudeIndexPresent) }
        if deviceClockNotSet { flags.insert(.deviceClockNotSet) }
        return flags
    }

    public static func decode(_ bytes: some Collection<UInt8>) throws(GATTDecodeError) -> PLXSpotCheckMeasurement {
        var reader = ByteReader(bytes)
        let flags = try Flags(rawValue: reader.readUInt8("flags"))
        let reading = try PLXReading.read(from: &reader, spo2Field: "spo2", pulseField: "pulse_rate")
        let timestamp = flags.contains(.timestampPresent) ? try DateTime.read(from: &reader) : nil
        let statusFields = try PLXStatusFields.read(
            from: &reader, measurementStatus: flags.contains(.measurementStatusPresent),
            deviceAndSensorStatus: flags.contains(.deviceAndSensorStatusPresent),
            pulseAmplitudeIndex: flags.contains(.pulseAmplitudeIndexPresent))
        return PLXSpotCheckMeasurement(
            reading: reading, timestamp: timestamp, measurementStatus: statusFields.measurementStatus,
            deviceAndSensorStatus: statusFields.deviceAndSensorStatus, pulseAmplitudeIndexPercent: statusFields.pulseAmplitudeIndexPercent,
            deviceClockNotSet: flags.contains(.deviceClockNotSet))
    }

    public func encode() throws(GATTEncodeError) -> [UInt8] {
        var writer = ByteWriter(capacity: 19)
        writer.writeUInt8(flags.rawValue)
        try reading.write(to: &writer, spo2Field: "spo2", pulseField: "pulse_rate")
        timestamp?.write(to: &writer)
        try statusFields.write(to: &writer)
        return writer.bytes
    }
}

extension PLXSpotCheckMeasurement: KeyValueRenderable {
    public var keyValuePairs: [(key: String, value: String)] {
        var pairs: [(key: String, value: String)] = [
            ("spo2_percent", reading.spo2Percent.description), ("pulse_rate_bpm", reading.pulseRateBPM.description),
        ]
        if let timestamp { pairs.append(("timestamp", timestamp.description)) }
        statusFields.render(into: &pairs)
        if deviceClockNotSet { pairs.append(("device_clock_not_set", "true")) }
        return pairs
    }

    public var summary: String { "SpO2 \(reading.spo2Percent)%, \(reading.pulseRateBPM) bpm" }
}

extension PLXSpotCheckMeasurement {
    var statusFields: PLXStatusFields {
        PLXStatusFields(
            measurementStatus: measurementStatus, deviceAndSensorStatus: deviceAndSensorStatus,
            pulseAmplitudeIndexPercent: pulseAmplitudeIndexPercent)
    }
}
