import Testing
@testable import GATT

@Suite struct HeartRateMeasurementTests {
    /// Builds the vector for `flags` field by field from the specification.
    static func vector(flags: Int) -> (bytes: [UInt8], expected: HeartRateMeasurement) {
        var bytes = [UInt8(flags)]
        let sixteen = Fragment.has(flags, 0)
        bytes += sixteen ? [0x2C, 0x01] : [0x48]  // 300 bpm / 72 bpm
        let contact: HeartRateMeasurement.SensorContact =
            !Fragment.has(flags, 2) ? .notSupported : Fragment.has(flags, 1) ? .detected : .notDetected
        var energy: UInt16?
        if Fragment.has(flags, 3) {
            bytes += [0x10, 0x27]  // 10000 kJ
            energy = 10000
        }
        var rr: [HeartRateMeasurement.RRInterval] = []
        if Fragment.has(flags, 4) {
            bytes += [0x40, 0x03, 0x32, 0x03]  // 832, 818 (1/1024 s)
            rr = [.init(rawValue: 832), .init(rawValue: 818)]
        }
        let expected = HeartRateMeasurement(
            beatsPerMinute: sixteen ? 300 : 72, valueFormat: sixteen ? .uint16 : .uint8, sensorContact: contact,
            energyExpendedKilojoules: energy, rrIntervals: rr)
        return (bytes, expected)
    }

    @Test(arguments: 0..<32)
    func decodesEveryFlagCombination(flags: Int) throws {
        let (bytes, expected) = Self.vector(flags: flags)
        #expect(try HeartRateMeasurement.decode(bytes) == expected)
    }

    @Test(arguments: 0..<32)
    func droppingTheLastByteOfAnyVectorThrows(flags: Int) {
        let (bytes, _) = Self.vector(flags: flags)
        #expect(throws: GATTDecodeError.self) { try HeartRateMeasurement.decode(bytes.dropLast()) }
    }

    @Test func oddTrailingRRByteIsATruncationAtItsOffset() {
        #expect(throws: GATTDecodeError(field: "rr_interval", offset: 4, reason: .truncated(needed: 2, available: 1))) {
            try HeartRateMeasurement.decode([0x10, 0x48, 0x40, 0x03, 0x32])
        }
    }

    @Test func emptyPayloadNamesTheFlagsField() {
        #expect(throws: GATTDecodeError(field: "flags", offset: 0, reason: .truncated(needed: 1, available: 0))) {
            try HeartRateMeasurement.decode([UInt8]())
        }
    }

    @Test func rrFlagWithoutIntervalsDecodesToNone() throws {
        #expect(try HeartRateMeasurement.decode([0x10, 0x48]).rrIntervals.isEmpty)
    }

    @Test func contactDetectedBitAloneMeansNotSupported() throws {
        #expect(try HeartRateMeasurement.decode([0x02, 0x48]).sensorContact == .notSupported)
    }

    @Test func rendersTheDocumentedKeyValuePairs() throws {
        let value = try HeartRateMeasurement.decode([0x16, 0x48, 0x40, 0x03, 0x32, 0x03])
        #expect(value.keyValuePairs.map { [$0.key, $0.value] } == [
            ["heart_rate_bpm", "72"], ["rr_intervals_ms", "812.5,798.8"], ["sensor_contact", "detected"],
        ])
        #expect(value.summary == "72 bpm, RR 812/799 ms")
    }

    @Test func rrIntervalsConvertFrom1024thsOfASecond() {
        #expect(HeartRateMeasurement.RRInterval(rawValue: 1024).milliseconds == 1000)
        #expect(HeartRateMeasurement.RRInterval(rawValue: 512).seconds == 0.5)
    }

    @Test func encoderRefusesABeatRateTooWideForItsFormat() {
        let value = HeartRateMeasurement(beatsPerMinute: 300, valueFormat: .uint8)
        #expect(throws: GATTEncodeError.self) { try value.encode() }
    }
}
