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

@Suite struct CSCMeasurementTests {
    static func vector(flags: Int) -> (bytes: [UInt8], expected: CSCMeasurement) {
        var bytes = [UInt8(flags)]
        var expected = CSCMeasurement()
        if Fragment.has(flags, 0) {
            bytes += [0xE8, 0x03, 0x00, 0x00, 0x00, 0x08]  // 1000 rev, 2048/1024 s
            expected.wheel = .init(cumulativeRevolutions: 1000, lastEventTime1024: 2048)
        }
        if Fragment.has(flags, 1) {
            bytes += [0xF4, 0x01, 0x00, 0x04]  // 500 rev, 1024/1024 s
            expected.crank = .init(cumulativeRevolutions: 500, lastEventTime1024: 1024)
        }
        return (bytes, expected)
    }

    @Test(arguments: 0..<4)
    func decodesEveryFlagCombination(flags: Int) throws {
        let (bytes, expected) = Self.vector(flags: flags)
        #expect(try CSCMeasurement.decode(bytes) == expected)
    }

    @Test(arguments: 0..<4)
    func droppingTheLastByteOfAnyVectorThrows(flags: Int) {
        #expect(throws: GATTDecodeError.self) { try CSCMeasurement.decode(Self.vector(flags: flags).bytes.dropLast()) }
    }

    @Test func rendersEventTimesInSeconds() throws {
        let value = try CSCMeasurement.decode(Self.vector(flags: 0b11).bytes)
        #expect(value.keyValuePairs.map { [$0.key, $0.value] } == [
            ["cumulative_wheel_revolutions", "1000"], ["last_wheel_event_time_s", "2.000"],
            ["cumulative_crank_revolutions", "500"], ["last_crank_event_time_s", "1.000"],
        ])
    }
}

@Suite struct WeightMeasurementTests {
    static func vector(flags: Int) -> (bytes: [UInt8], expected: WeightMeasurement) {
        let imperial = Fragment.has(flags, 0)
        var bytes = [UInt8(flags), 0xB0, 0x36]  // 14000: 70 kg (SI) or 140 lb (imperial)
        var expected = WeightMeasurement(unitSystem: imperial ? .imperial : .si, weightRaw: 14000)
        if Fragment.has(flags, 1) { bytes += Fragment.dateTimeBytes; expected.timestamp = Fragment.dateTime }
        if Fragment.has(flags, 2) { bytes += [0x02]; expected.userID = 2 }
        if Fragment.has(flags, 3) {
            bytes += [0xE5, 0x00, 0xD6, 0x06]  // BMI 22.9, height 1750
            expected.bmiAndHeight = .init(bmiRaw: 229, heightRaw: 1750)
        }
        return (bytes, expected)
    }

    @Test(arguments: 0..<16)
    func decodesEveryFlagCombination(flags: Int) throws {
        let (bytes, expected) = Self.vector(flags: flags)
        #expect(try WeightMeasurement.decode(bytes) == expected)
    }

    @Test(arguments: 0..<16)
    func droppingTheLastByteOfAnyVectorThrows(flags: Int) {
        #expect(throws: GATTDecodeError.self) { try WeightMeasurement.decode(Self.vector(flags: flags).bytes.dropLast()) }
    }

    @Test func unsuccessfulMeasurementHasNoWeight() throws {
        let value = try WeightMeasurement.decode([0x00, 0xFF, 0xFF])
        #expect(value.weightRaw == nil)
        #expect(value.keyValuePairs.first?.value == "unsuccessful")
    }

    @Test(arguments: [(0, "70.000", "kg", "1.750", "m"), (1, "140.00", "lb", "175.0", "in")])
    func resolutionFollowsTheUnitFlag(units: Int, weight: String, weightUnit: String, height: String, heightUnit: String) throws {
        let value = try WeightMeasurement.decode(Self.vector(flags: units | 0b1000).bytes)
        #expect(value.keyValuePairs.map { [$0.key, $0.value] } == [
            ["weight", weight], ["weight_unit", weightUnit], ["bmi_kg_per_m2", "22.9"], ["height", height],
            ["height_unit", heightUnit],
        ])
    }
}
