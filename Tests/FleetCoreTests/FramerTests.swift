import Testing
import FleetCore

@Suite struct FramerTests {
    @Test func keepsEveryFragmentWithinMTUMinusThree() throws {
        let framer = try Framer(mtu: 23)
        let fragments = try framer.fragments(of: Array(repeating: 0xAB, count: 100))
        #expect(fragments.allSatisfy { $0.count <= 20 })
        #expect(fragments.count == 6)  // 17 + 5 × 19 = 112 ≥ 100 + 2 checksum bytes
    }

    @Test func marksASingleFragmentMessageAsBothFirstAndLast() throws {
        let fragments = try Framer(mtu: 23).fragments(of: [1, 2, 3])
        let only = try #require(fragments.first)
        #expect(fragments.count == 1)
        #expect(only[0] == FrameHeader.firstFlag | FrameHeader.lastFlag)
    }

    @Test func writesTheMessageLengthLittleEndianInTheFirstFragment() throws {
        let fragments = try Framer(mtu: 247).fragments(of: Array(repeating: 0, count: 300))
        let first = try #require(fragments.first)
        #expect(Array(first[1...2]) == [0x2C, 0x01])
    }

    @Test func appendsTheChecksumLittleEndianAfterTheMessage() throws {
        let fragments = try Framer(mtu: 23).fragments(of: Array("123456789".utf8))
        let only = try #require(fragments.first)
        #expect(Array(only.suffix(2)) == [0xB1, 0x29])
    }

    @Test func numbersFragmentsFromZeroModuloSixtyFour() throws {
        let framer = try Framer(mtu: 23, maxMessageSize: 4096)
        let fragments = try framer.fragments(of: Array(repeating: 7, count: 1500))
        let sequences = fragments.map { $0[0] & FrameHeader.sequenceMask }
        #expect(sequences.enumerated().allSatisfy { Int($0.element) == $0.offset % 64 })
    }

    @Test func sendsAnEmptyMessageAsOneFragment() throws {
        let fragments = try Framer(mtu: 23).fragments(of: [])
        #expect(fragments.count == 1)
        #expect(fragments.first?.count == 5)
    }

    @Test func refusesAnMTUWithNoRoomForData() {
        #expect(throws: FrameError.mtuTooSmall(mtu: 6)) { try Framer(mtu: 6) }
    }

    @Test func refusesAMessageOverTheLimit() throws {
        let framer = try Framer(mtu: 23, maxMessageSize: 10)
        #expect(throws: FrameError.messageTooLarge(size: 11, limit: 10)) {
            try framer.fragments(of: Array(repeating: 0, count: 11))
        }
    }
}
