// The sensor-side status of a pulse oximeter (signal quality, sensor displaced, ...) explains
// gaps and outliers in SpO2 data, so it is decoded bit by bit rather than logged as a number.

/// The PLX Device and Sensor Status field (24 bits, shared by 0x2A5E and 0x2A5F). Bits 16...23
/// are reserved and kept as received.
public struct PLXDeviceAndSensorStatus: OptionSet, Hashable, Sendable {
    public let rawValue: UInt32
    public init(rawValue: UInt32) { self.rawValue = rawValue }

    public static let extendedDisplayUpdateOngoing = Self(rawValue: 1 << 0)
    public static let equipmentMalfunctionDetected = Self(rawValue: 1 << 1)
    public static let signalProcessingIrregularityDetected = Self(rawValue: 1 << 2)
    public static let inadequateSignalDetected = Self(rawValue: 1 << 3)
    public static let poorSignalDetected = Self(rawValue: 1 << 4)
    public static let lowPerfusionDetected = Self(rawValue: 1 << 5)
    public static let erraticSignalDetected = Self(rawValue: 1 << 6)
    public static let nonpulsatileSignalDetected = Self(rawValue: 1 << 7)
    public static let questionablePulseDetected = Self(rawValue: 1 << 8)
    public static let signalAnalysisOngoing = Self(rawValue: 1 << 9)
    public static let sensorInterferenceDetected = Self(rawValue: 1 << 10)
    public static let sensorUnconnectedToUser = Self(rawValue: 1 << 11)
    public static let unknownSensorConnected = Self(rawValue: 1 << 12)
    public static let sensorDisplaced = Self(rawValue: 1 << 13)
    public static let sensorMalfunctioning = Self(rawValue: 1 << 14)
    public static let sensorDisconnected = Self(rawValue: 1 << 15)

    /// Comma-separated snake_case names of the set bits.
    public var names: String {
        FlagNames.join(rawValue: UInt64(rawValue), names: [
            "extended_display_update_ongoing", "equipment_malfunction_detected",
            "signal_processing_irregularity_detected", "inadequate_signal_detected", "poor_signal_detected",
            "low_perfusion_detected", "erratic_signal_detected", "nonpulsatile_signal_detected",
            "questionable_pulse_detected", "signal_analysis_ongoing", "sensor_interference_detected",
            "sensor_unconnected_to_user", "unknown_sensor_connected", "sensor_displaced",
            "sensor_malfunctioning", "sensor_disconnected",
        ])
    }
}
