import Testing
@testable import GATT

@Suite struct TemperatureMeasurementTests {
    static func vector(flags: Int) -> (bytes: [UInt8], expected: TemperatureMeasurement) {
        var bytes = [UInt8(flags)]
        let fahrenheit = Fragment.has(flags, 0)
        // 36.5 °C: mantissa 365 (0x00016D), exponent -1; 97.7 °F: mantissa 977 (0x0003D1).
        bytes += fahrenheit ? [0xD1, 0x03, 0x00, 0xFF] : [0x6D, 0x01, 0x00, 0xFF]
        var timestamp: DateTime?
        if Fragment.has(flags, 1) {
            bytes += Fragment.dateTimeBytes
            timestamp = Fragment.dateTime
        }
        var type: TemperatureMeasurement.TemperatureType?
        if Fragment.has(flags, 2) {
            bytes += [0x06]  // mouth
            type = .mouth
        }
        let expected = TemperatureMeasurement(
            temperature: .value(mantissa: fahrenheit ? 977 : 365, exponent: -1),
            unit: fahrenheit ? .fahrenheit : .celsius, timestamp: timestamp, temperatureType: type)
        return (bytes, expected)
    }

    @Test(arguments: 0..<8)
    func decodesEveryFlagCombination(flags: Int) throws {
        let (bytes, expected) = Self.vector(flags: flags)
        #expect(try TemperatureMeasurement.decode(bytes) == expected)
    }

    @Test(arguments: 0..<8)
    func intermediateTemperatureSharesTheLayout(flags: Int) throws {
        let (bytes, expected) = Self.vector(flags: flags)
        #expect(try CharacteristicRegistry.standard.decode(bytes, from: .intermediateTemperature)
            == .intermediateTemperature(expected))
    }

    @Test(arguments: 0..<8)
    func droppingTheLastByteOfAnyVectorThrows(flags: Int) {
        #expect(throws: GATTDecodeError.self) { try TemperatureMeasurement.decode(Self.vector(flags: flags).bytes.dropLast()) }
    }

    @Test func specialFloatValuesSurviveDecoding() throws {
        let value = try TemperatureMeasurement.decode([0x00, 0xFF, 0xFF, 0x7F, 0x00])
        #expect(value.temperature == .nan)
        #expect(value.keyValuePairs.first?.value == "nan")
    }

    @Test func reservedTemperatureTypeIsKeptNotRejected() throws {
        #expect(try TemperatureMeasurement.decode([0x04, 0x6D, 0x01, 0x00, 0xFF, 0x0A]).temperatureType == .reserved(10))
    }

    @Test func invalidTimestampMonthNamesFieldAndOffset() {
        let bytes: [UInt8] = [0x02, 0x6D, 0x01, 0x00, 0xFF, 0xE8, 0x07, 0x0D, 0x05, 0x0E, 0x07, 0x09]
        #expect(throws: GATTDecodeError(field: "month", offset: 7, reason: .outOfRange(value: 13))) {
            try TemperatureMeasurement.decode(bytes)
        }
    }

    @Test func rendersTemperatureWithUnitAndType() throws {
        let (bytes, _) = Self.vector(flags: 0b111)
        let value = try TemperatureMeasurement.decode(bytes)
        #expect(value.keyValuePairs.map { [$0.key, $0.value] } == [
            ["temperature", "97.7"], ["temperature_unit", "fahrenheit"], ["timestamp", "2024-03-05T14:07:09"],
            ["temperature_type", "mouth"],
        ])
        #expect(value.summary == "97.7 °F (mouth)")
    }
}
