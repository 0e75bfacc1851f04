import Testing
@testable import GATT

@Suite struct RSCMeasurementTests {
    static func vector(flags: Int) -> (bytes: [UInt8], expected: RSCMeasurement) {
        var bytes = [UInt8(flags), 0x00, 0x03, 0xAA]  // 768/256 = 3 m/s, 170 steps/min
        var expected = RSCMeasurement(speedRaw: 768, cadenceStepsPerMinute: 170)
        if Fragment.has(flags, 0) { bytes += [0x78, 0x00]; expected.strideLengthCentimeters = 120 }
        if Fragment.has(flags, 1) { bytes += [0x39, 0x30, 0x00, 0x00]; expected.totalDistanceDecimeters = 12345 }
        expected.motion = Fragment.has(flags, 2) ? .running : .walking
        return (bytes, expected)
    }

    @Test(arguments: 0..<8)
    func decodesEveryFlagCombination(flags: Int) throws {
        let (bytes, expected) = Self.vector(flags: flags)
        #expect(try RSCMeasurement.decode(bytes) == expected)
    }

    @Test(arguments: 0..<8)
    func droppingTheLastByteOfAnyVectorThrows(flags: Int) {
        #expect(throws: GATTDecodeError.self) { try RSCMeasurement.decode(Self.vector(flags: flags).bytes.dropLast()) }
    }

    @Test func rendersUnitsInKeys() throws {
        let value = try RSCMeasurement.decode(Self.vector(flags: 0b111).bytes)
        #expect(value.keyValuePairs.map { [$0.key, $0.value] } == [
            ["speed_m_per_s", "3.000"], ["cadence_steps_per_min", "170"], ["stride_length_m", "1.20"],
            ["total_distance_m", "1234.5"], ["motion", "running"],
        ])
        #expect(value.speedMetersPerSecond == 3)
    }
}
