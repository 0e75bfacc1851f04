import Testing
import FleetCore

@Suite struct CRC16CCITTTests {
    @Test func matchesTheStandardCheckValue() {
        #expect(CRC16CCITT.checksum(Array("123456789".utf8)) == 0x29B1)
    }

    @Test func isTheInitialValueForNoBytes() {
        #expect(CRC16CCITT.checksum([UInt8]()) == 0xFFFF)
    }

    @Test func givesTheSameResultWhenComputedInPieces() {
        let bytes = Array("123456789".utf8)
        let first = CRC16CCITT.checksum(bytes[..<4])
        #expect(CRC16CCITT.update(first, with: bytes[4...]) == 0x29B1)
    }
}
