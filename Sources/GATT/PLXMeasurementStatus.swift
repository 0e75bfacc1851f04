// Pulse oximeters qualify each reading with status bits; a reading flagged invalid or
// questionable must be visible as such in every log line that carries it.

/// The PLX Measurement Status field (16 bits, shared by 0x2A5E and 0x2A5F). Bits 0...4 are
/// reserved and kept as received.
public struct PLXMeasurementStatus: OptionSet, Hashable, Sendable {
    public let rawValue: UInt16
    public init(rawValue: UInt16) { self.rawValue = rawValue }

    public static let measurementOngoing = Self(rawValue: 1 << 5)
    public static let earlyEstimatedData = Self(rawValue: 1 << 6)
    public static let validatedData = Self(rawValue: 1 << 7)
    public static let fullyQualifiedData = Self(rawValue: 1 << 8)
    public static let dataFromMeasurementStorage = Self(rawValue: 1 << 9)
    public static let dataForDemonstration = Self(rawValue: 1 << 10)
    public static let dataForTesting = Self(rawValue: 1 << 11)
    public static let calibrationOngoing = Self(rawValue: 1 << 12)
    public static let measurementUnavailable = Self(rawValue: 1 << 13)
    public static let questionableMeasurementDetected = Self(rawValue: 1 << 14)
    public static let invalidMeasurementDetected = Self(rawValue: 1 << 15)

    /// Comma-separated snake_case names of the set bits.
    public var names: String {
        FlagNames.join(rawValue: UInt64(rawValue), names: [
            "", "", "", "", "",
            "measurement_ongoing", "early_estimated_data", "validated_data", "fully_qualified_data",
            "data_from_measurement_storage", "data_for_demonstration", "data_for_testing",
            "calibration_ongoing", "measurement_unavailable", "questionable_measurement_detected",
            "invalid_measurement_detected",
        ])
    }
}
