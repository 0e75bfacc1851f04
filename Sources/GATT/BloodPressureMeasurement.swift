// Cuffs report three pressures in one unit chosen by a flag, plus optional pulse, user and status;
// the status bits say whether the reading itself can be trusted.

/// The Blood Pressure Measurement characteristic (0x2A35).
///
/// Layout: Flags (1); Systolic, Diastolic, Mean Arterial Pressure (3 × SFLOAT, in `unit`);
/// Time Stamp (7, Date Time) when `timestampPresent`; Pulse Rate (SFLOAT, bpm) when
/// `pulseRatePresent`; User ID (1, 255 = unknown user) when `userIDPresent`; Measurement Status
/// (2) when `measurementStatusPresent`.
public struct BloodPressureMeasurement: Hashable, Sendable {
    /// The Flags field.
    public struct Flags: OptionSet, Hashable, Sendable {
        public let rawValue: UInt8
        public init(rawValue: UInt8) { self.rawValue = rawValue }

        /// Set: kPa; clear: mmHg.
        public static let unitKilopascal = Flags(rawValue: 1 << 0)
        public static let timestampPresent = Flags(rawValue: 1 << 1)
        public static let pulseRatePresent = Flags(rawValue: 1 << 2)
        public static let userIDPresent = Flags(rawValue: 1 << 3)
        public static let measurementStatusPresent = Flags(rawValue: 1 << 4)
    }

    /// The unit of all three pressures, from the `unitKilopascal` flag; raw values are the rendering.
    public enum Unit: String, Hashable, Sendable {
        case millimetersOfMercury = "mmhg"
        case kilopascal = "kpa"
    }

    /// The Measurement Status field. Bits 3...4 hold the pulse rate range as a 2-bit value;
    /// read it through `pulseRateRange`. Bits 6...15 are reserved and kept as received.
    public struct MeasurementStatus: OptionSet, Hashable, Sendable {
        public let rawValue: UInt16
        public init(rawValue: UInt16) { self.rawValue = rawValue }

        public static let bodyMovementDetected = Self(rawValue: 1 << 0)
        public static let cuffTooLoose = Self(rawValue: 1 << 1)
        public static let irregularPulseDetected = Self(rawValue: 1 << 2)
        /// Pulse rate range value 1.
        public static let pulseRateExceedsUpperLimit = Self(rawValue: 1 << 3)
        /// Pulse rate range value 2.
        public static let pulseRateBelowLowerLimit = Self(rawValue: 1 << 4)
        public static let improperMeasurementPosition = Self(rawValue: 1 << 5)

        /// The 2-bit pulse rate range value; raw values are the rendering.
        public enum PulseRateRange: String, Hashable, Sendable {
            case withinRange = "within_range"
            case exceedsUpperLimit = "exceeds_upper_limit"
            case belowLowerLimit = "below_lower_limit"
            case reserved
        }

        public var pulseRateRange: PulseRateRange {
            switch (rawValue >> 3) & 0b11 {
            case 0: .withinRange
            case 1: .exceedsUpperLimit
            case 2: .belowLowerLimit
            default: .reserved
            }
        }

        /// Comma-separated snake_case names of the set conditions.
        public var names: String {
            let rangeBits: UInt16 = 0b11 << 3
            var text = FlagNames.join(rawValue: UInt64(rawValue & ~rangeBits), names: [
                "body_movement_detected", "cuff_too_loose", "irregular_pulse_detected", "", "",
                "improper_measurement_position",
            ])
            if pulseRateRange != .withinRange {
                text += (text.isEmpty ? "" : ",") + "pulse_rate_range_" + pulseRateRange.rawValue
            }
            return text
        }
    }

    public var systolic: MedicalFloat
    public var diastolic: MedicalFloat
    public var meanArterialPressure: MedicalFloat
    public var unit: Unit
    public var timestamp: DateTime?
    public var pulseRateBPM: MedicalFloat?
    /// 255 means "unknown user".
    public var userID: UInt8?
    public var measurementStatus: MeasurementStatus?

    public init(
        systolic: MedicalFloat, diastolic: MedicalFloat, meanArterialPressure: MedicalFloat, unit: Unit,
        timestamp: DateTime? = nil, pulseRateBPM: MedicalFloat? = nil, userID: UInt8? = nil,
        measurementStatus: MeasurementStatus? = nil
    ) {
        self.systolic = systolic
        self.diastolic = diastolic
        self.meanArterialPressure = meanArterialPressure
        self.unit = unit
        self.timestamp = timestamp
        self.pulseRateBPM = pulseRateBPM
        self.userID = userID
        self.measurementStatus = measurementStatus
    }

    /// The flags `encode()` writes.
    public var flags: Flags {
        var flags: Flags = []
        if unit == .kilopascal { flags.insert(.unitKilopascal) }
        if timestamp != nil { flags.insert(.timestampPresent) }
        if pulseRateBPM != nil { flags.insert(.pulseRatePresent) }
        if userID != nil { flags.insert(.userIDPresent) }
        if measurementStatus != nil { flags.insert(.measurementStatusPresent) }
        return flags
    }

    public static func decode(_ bytes: some Collection<UInt8>) throws(GATTDecodeError) -> BloodPressureMeasurement {
        var reader = ByteReader(bytes)
        let flags = try Flags(rawValue: reader.readUInt8("flags"))
        let systolic = try reader.readSFLOAT("systolic")
        let diastolic = try reader.readSFLOAT("diastolic")
        let map = try reader.readSFLOAT("mean_arterial_pressure")
        let timestamp = flags.contains(.timestampPresent) ? try DateTime.read(from: &reader) : nil
        let pulse = flags.contains(.pulseRatePresent) ? try reader.readSFLOAT("pulse_rate") : nil
        let user = flags.contains(.userIDPresent) ? try reader.readUInt8("user_id") : nil
        let status = flags.contains(.measurementStatusPresent)
            ? try MeasurementStatus(rawValue: reader.readUInt16("measurement_status")) : nil
        return BloodPressureMeasurement(
            systolic: systolic, diastolic: diastolic, meanArterialPressure: map,
            unit: flags.contains(.unitKilopascal) ? .kilopascal : .millimetersOfMercury,
            timestamp: timestamp, pulseRateBPM: pulse, userID: user, measurementStatus: status)
    }

    public func encode() throws(GATTEncodeError) -> [UInt8] {
        var writer = ByteWriter(capacity: 19)
        writer.writeUInt8(flags.rawValue)
        try writer.writeSFLOAT(systolic, field: "systolic")
        try writer.writeSFLOAT(diastolic, field: "diastolic")
        try writer.writeSFLOAT(meanArterialPressure, field: "mean_arterial_pressure")
        timestamp?.write(to: &writer)
        if let pulseRateBPM { try writer.writeSFLOAT(pulseRateBPM, field: "pulse_rate") }
        if let userID { writer.writeUInt8(userID) }
        if let measurementStatus { writer.writeUInt16(measurementStatus.rawValue) }
        return writer.bytes
    }
}

extension BloodPressureMeasurement: KeyValueRenderable {
    public var keyValuePairs: [(key: String, value: String)] {
        var pairs: [(key: String, value: String)] = [
            ("systolic", systolic.description), ("diastolic", diastolic.description),
            ("mean_arterial_pressure", meanArterialPressure.description), ("pressure_unit", unit.rawValue),
        ]
        if let timestamp { pairs.append(("timestamp", timestamp.description)) }
        if let pulseRateBPM { pairs.append(("pulse_rate_bpm", pulseRateBPM.description)) }
        if let userID { pairs.append(("user_id", userID == 0xFF ? "unknown" : String(userID))) }
        if let measurementStatus { pairs.append(("measurement_status", measurementStatus.names)) }
        return pairs
    }

    public var summary: String {
        var text = "\(systolic)/\(diastolic) \(unit == .kilopascal ? "kPa" : "mmHg")"
        if let pulseRateBPM { text += ", \(pulseRateBPM) bpm" }
        return text
    }
}
