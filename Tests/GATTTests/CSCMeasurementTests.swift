import Testing
@testable import GATT

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
