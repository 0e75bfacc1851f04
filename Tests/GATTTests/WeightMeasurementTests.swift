import Testing
@testable import GATT

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
