import Testing
@testable import GATT

@Suite struct BloodPressureMeasurementTests {
    static func vector(flags: Int) -> (bytes: [UInt8], expected: BloodPressureMeasurement) {
        // SFLOAT 120, 80, 93 (exponent 0).
        var bytes = [UInt8(flags), 0x78, 0x00, 0x50, 0x00, 0x5D, 0x00]
        var expected = BloodPressureMeasurement(
            systolic: .value(mantissa: 120, exponent: 0), diastolic: .value(mantissa: 80, exponent: 0),
            meanArterialPressure: .value(mantissa: 93, exponent: 0),
            unit: Fragment.has(flags, 0) ? .kilopascal : .millimetersOfMercury)
        if Fragment.has(flags, 1) { bytes += Fragment.dateTimeBytes; expected.timestamp = Fragment.dateTime }
        if Fragment.has(flags, 2) { bytes += [0x44, 0x00]; expected.pulseRateBPM = .value(mantissa: 68, exponent: 0) }
        if Fragment.has(flags, 3) { bytes += [0x03]; expected.userID = 3 }
        if Fragment.has(flags, 4) {
            bytes += [0x0D, 0x00]  // bits 0, 2, 3
            expected.measurementStatus = [.bodyMovementDetected, .irregularPulseDetected, .pulseRateExceedsUpperLimit]
        }
        return (bytes, expected)
    }

    @Test(arguments: 0..<32)
    func decodesEveryFlagCombination(flags: Int) throws {
        let (bytes, expected) = Self.vector(flags: flags)
        #expect(try BloodPressureMeasurement.decode(bytes) == expected)
    }

    @Test(arguments: 0..<32)
    func droppingTheLastByteOfAnyVectorThrows(flags: Int) {
        #expect(throws: GATTDecodeError.self) { try BloodPressureMeasurement.decode(Self.vector(flags: flags).bytes.dropLast()) }
    }

    @Test(arguments: [
        (UInt16(0b00_000), BloodPressureMeasurement.MeasurementStatus.PulseRateRange.withinRange),
        (0b01_000, .exceedsUpperLimit), (0b10_000, .belowLowerLimit), (0b11_000, .reserved),
    ])
    func pulseRateRangeIsATwoBitField(raw: UInt16, range: BloodPressureMeasurement.MeasurementStatus.PulseRateRange) {
        #expect(BloodPressureMeasurement.MeasurementStatus(rawValue: raw).pulseRateRange == range)
    }

    @Test func rendersPressuresUnitAndStatus() throws {
        let value = try BloodPressureMeasurement.decode(Self.vector(flags: 0b1_1101).bytes)
        #expect(value.keyValuePairs.map { [$0.key, $0.value] } == [
            ["systolic", "120"], ["diastolic", "80"], ["mean_arterial_pressure", "93"], ["pressure_unit", "kpa"],
            ["pulse_rate_bpm", "68"], ["user_id", "3"],
            ["measurement_status", "body_movement_detected,irregular_pulse_detected,pulse_rate_range_exceeds_upper_limit"],
        ])
        #expect(value.summary == "120/80 kPa, 68 bpm")
    }

    @Test func unknownUserRendersAsUnknown() throws {
        let value = try BloodPressureMeasurement.decode([0x08, 0x78, 0x00, 0x50, 0x00, 0x5D, 0x00, 0xFF])
        #expect(value.keyValuePairs.last?.value == "unknown")
    }
}
