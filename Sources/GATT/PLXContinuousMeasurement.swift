// Continuous PLX streams carry up to three averaging windows (normal, fast, slow) of the same
// pair; each is optional except the normal one.

/// The PLX Continuous Measurement characteristic (0x2A5F).
///
/// Layout: Flags (1); SpO2PR-Normal (2 × SFLOAT); SpO2PR-Fast (2 × SFLOAT) when `fastPresent`;
/// SpO2PR-Slow (2 × SFLOAT) when `slowPresent`; Measurement Status (2) when
/// `measurementStatusPresent`; Device and Sensor Status (3) when `deviceAndSensorStatusPresent`;
/// Pulse Amplitude Index (SFLOAT, %) when `pulseAmplitudeIndexPresent`.
public struct PLXContinuousMeasurement: Hashable, Sendable {
    /// The Flags field.
    public struct Flags: OptionSet, Hashable, Sendable {
        public let rawValue: UInt8
        public init(rawValue: UInt8) { self.rawValue = rawValue }

        public static let fastPresent = Flags(rawValue: 1 << 0)
        public static let slowPresent = Flags(rawValue: 1 << 1)
        public static let measurementStatusPresent = Flags(rawValue: 1 << 2)
        public static let deviceAndSensorStatusPresent = Flags(rawValue: 1 << 3)
        public static let pulseAmplitudeIndexPresent = Flags(rawValue: 1 << 4)
    }

    public var normal: PLXReading
    public var fast: PLXReading?
    public var slow: PLXReading?
    public var measurementStatus: PLXMeasurementStatus?
    public var deviceAndSensorStatus: PLXDeviceAndSensorStatus?
    public var pulseAmplitudeIndexPercent: MedicalFloat?

    public init(
        normal: PLXReading, fast: PLXReading? = nil, slow: PLXReading? = nil,
        measurementStatus: PLXMeasurementStatus? = nil, deviceAndSensorStatus: PLXDeviceAndSensorStatus? = nil,
        pulseAmplitudeIndexPercent: MedicalFloat? = nil
    ) {
        self.normal = normal
        self.fast = fast
        self.slow = slow
        self.measurementStatus = measurementStatus
        self.deviceAndSensorStatus = deviceAndSensorStatus
        self.pulseAmplitudeIndexPercent = pulseAmplitudeIndexPercent
    }

    /// The flags `encode()` writes.
    public var flags: Flags {
        var flags: Flags = []
        if fast != nil { flags.insert(.fastPresent) }
        if slow != nil { flags.insert(.slowPresent) }
        if measurementStatus != nil { flags.insert(.measurementStatusPresent) }
        if deviceAndSensorStatus != nil { flags.insert(.deviceAndSensorStatusPresent) }
        if pulseAmplitudeIndexPercent != nil { flags.insert(.pulseAmplitudeIndexPresent) }
        return flags
    }

    public static func decode(_ bytes: some Collection<UInt8>) throws(GATTDecodeError) -> PLXContinuousMeasurement {
        var reader = ByteReader(bytes)
        let flags = try Flags(rawValue: reader.readUInt8("flags"))
        let normal = try PLXReading.read(from: &reader, spo2Field: "spo2", pulseField: "pulse_rate")
        let fast = flags.contains(.fastPresent)
            ? try PLXReading.read(from: &reader, spo2Field: "spo2_fast", pulseField: "pulse_rate_fast") : nil
        let slow = flags.contains(.slowPresent)
            ? try PLXReading.read(from: &reader, spo2Field: "spo2_slow", pulseField: "pulse_rate_slow") : nil
        let statusFields = try PLXStatusFields.read(
            from: &reader, measurementStatus: flags.contains(.measurementStatusPresent),
            deviceAndSensorStatus: flags.contains(.deviceAndSensorStatusPresent),
            pulseAmplitudeIndex: flags.contains(.pulseAmplitudeIndexPresent))
        return PLXContinuousMeasurement(
            normal: normal, fast: fast, slow: slow, measurementStatus: statusFields.measurementStatus,
            deviceAndSensorStatus: statusFields.deviceAndSensorStatus, pulseAmplitudeIndexPercent: statusFields.pulseAmplitudeIndexPercent)
    }

    public func encode() throws(GATTEncodeError) -> [UInt8] {
        var writer = ByteWriter(capacity: 20)
        writer.writeUInt8(flags.rawValue)
        try normal.write(to: &writer, spo2Field: "spo2", pulseField: "pulse_rate")
        try fast?.write(to: &writer, spo2Field: "spo2_fast", pulseField: "pulse_rate_fast")
        try slow?.write(to: &writer, spo2Field: "spo2_slow", pulseField: "pulse_rate_slow")
        try statusFields.write(to: &writer)
        return writer.bytes
    }
}

extension PLXContinuousMeasurement: KeyValueRenderable {
    public var keyValuePairs: [(key: String, value: String)] {
        var pairs: [(key: String, value: String)] = [
            ("spo2_percent", normal.spo2Percent.description), ("pulse_rate_bpm", normal.pulseRateBPM.description),
        ]
        if let fast {
            pairs.append(("spo2_fast_percent", fast.spo2Percent.description))
            pairs.append(("pulse_rate_fast_bpm", fast.pulseRateBPM.description))
        }
        if let slow {
            pairs.append(("spo2_slow_percent", slow.spo2Percent.description))
            pairs.append(("pulse_rate_slow_bpm", slow.pulseRateBPM.description))
        }
        statusFields.render(into: &pairs)
        return pairs
    }

    public var summary: String { "SpO2 \(normal.spo2Percent)%, \(normal.pulseRateBPM) bpm" }
}

extension PLXContinuousMeasurement {
    var statusFields: PLXStatusFields {
        PLXStatusFields(
            measurementStatus: measurementStatus, deviceAndSensorStatus: deviceAndSensorStatus,
            pulseAmplitudeIndexPercent: pulseAmplitudeIndexPercent)
    }
}
