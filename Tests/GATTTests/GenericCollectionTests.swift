import Testing
@testable import GATT

@Suite struct GenericCollectionTests {
    @Test func decodersAcceptAnyCollectionOfBytes() throws {
        // A reversed view is a Collection<UInt8> that is neither an Array nor contiguous.
        let reversed: [UInt8] = [0x03, 0x32, 0x03, 0x40, 0x48, 0x10]
        let value = try HeartRateMeasurement.decode(reversed.reversed())
        #expect(value.rrIntervals == [.init(rawValue: 832), .init(rawValue: 818)])
    }
}
