import Testing
@testable import GATT

@Suite struct PLXMeasurementTests {
    static let spo2PR98_72: [UInt8] = [0x62, 0x00, 0x48, 0x00]  // SFLOAT 98, 72
    static let reading98_72 = PLXReading(spo2Percent: .value(mantissa: 98, exponent: 0), pulseRateBPM: .value(mantissa: 72, exponent: 0))
    static let statusBytes: [UInt8] = [0x60, 0x00]  // bits 5, 6
    static let status: PLXMeasurementStatus = [.measurementOngoing, .earlyEstimatedData]
    static let sensorBytes: [UInt8] = [0x10, 0x08, 0x00]  // bits 4, 11
    static let sensor: PLXDeviceAndSensorStatus = [.poorSignalDetected, .sensorUnconnectedToUser]
    static let paiBytes: [UInt8] = [0x23, 0xF0]  // 3.5: mantissa 35, exponent -1
    static let pai = MedicalFloat.value(mantissa: 35, exponent: -1)

    static func spotCheckVector(flags: Int) -> (bytes: [UInt8], expected: PLXSpotCheckMeasurement) {
        var bytes = [UInt8(flags)] + spo2PR98_72
        var expected = PLXSpotCheckMeasurement(reading: reading98_72)
        if Fragment.has(flags, 0) { bytes += Fragment.dateTimeBytes; expected.timestamp = Fragment.dateTime }
        if Fragment.has(flags, 1) { bytes += statusBytes; expected.measurementStatus = status }
        if Fragment.has(flags, 2) { bytes += sensorBytes; expected.deviceAndSensorStatus = sensor }
        if Fragment.has(flags, 3) { bytes += paiBytes; expected.pulseAmplitudeIndexPercent = pai }
        expected.deviceClockNotSet = Fragment.has(flags, 4)
        return (bytes, expected)
    }

    static func continuousVector(flags: Int) -> (bytes: [UInt8], expected: PLXContinuousMeasurement) {
        var bytes = [UInt8(flags)] + spo2PR98_72
        var expected = PLXContinuousMeasurement(normal: reading98_72)
        if Fragment.has(flags, 0) {
            bytes += [0x61, 0x00, 0x49, 0x00]  // 97, 73
            expected.fast = PLXReading(spo2Percent: .value(mantissa: 97, exponent: 0), pulseRateBPM: .value(mantissa: 73, exponent: 0))
        }
        if Fragment.has(flags, 1) {
            bytes += [0x63, 0x00, 0x47, 0x00]  // 99, 71
            expected.slow = PLXReading(spo2Percent: .value(mantissa: 99, exponent: 0), pulseRateBPM: .value(mantissa: 71, exponent: 0))
        }
        if Fragment.has(flags, 2) { bytes += statusBytes; expected.measurementStatus = status }
        if Fragment.has(flags, 3) { bytes += sensorBytes; expected.deviceAndSensorStatus = sensor }
        if Fragment.has(flags, 4) { bytes += paiBytes; expected.pulseAmplitudeIndexPercent = pai }
        return (bytes, expected)
    }

    @Test(arguments: 0..<32)
    func spotCheckDecodesEveryFlagCombination(flags: Int) throws {
        let (bytes, expected) = Self.spotCheckVector(flags: flags)
        #expect(try PLXSpotCheckMeasurement.decode(bytes) == expected)
    }

    @Test(arguments: 0..<32)
    func continuousDecodesEveryFlagCombination(flags: Int) throws {
        let (bytes, expected) = Self.continuousVector(flags: flags)
        #expect(try PLXContinuousMeasurement.decode(bytes) == expected)
    }

    @Test(arguments: 0..<32)
    func droppingTheLastByteOfAnyVectorThrows(flags: Int) {
        #expect(throws: GATTDecodeError.self) { try PLXSpotCheckMeasurement.decode(Self.spotCheckVector(flags: flags).bytes.dropLast()) }
        #expect(throws: GATTDecodeError.self) { try PLXContinuousMeasurement.decode(Self.continuousVector(flags: flags).bytes.dropLast()) }
    }

    @Test func spO2SpecialValueIsNotANumber() throws {
        let value = try PLXSpotCheckMeasurement.decode([0x00, 0xFF, 0x07, 0x48, 0x00])
        #expect(value.reading.spo2Percent == .nan)
        #expect(value.reading.spo2Percent.finiteValue == nil)
    }

    @Test func rendersStatusBitsByName() throws {
        let value = try PLXSpotCheckMeasurement.decode(Self.spotCheckVector(flags: 0b1_0110).bytes)
        #expect(value.keyValuePairs.map { [$0.key, $0.value] } == [
            ["spo2_percent", "98"], ["pulse_rate_bpm", "72"],
            ["measurement_status", "measurement_ongoing,early_estimated_data"],
            ["device_sensor_status", "poor_signal_detected,sensor_unconnected_to_user"],
            ["device_clock_not_set", "true"],
        ])
        #expect(value.summary == "SpO2 98%, 72 bpm")
    }

    @Test func reservedStatusBitsRenderByNumber() {
        #expect(PLXMeasurementStatus(rawValue: 0b1).names == "bit_0")
    }
}
