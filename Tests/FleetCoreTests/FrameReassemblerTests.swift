import Testing
import FleetCore

@Suite struct FrameReassemblerTests {
    let message: [UInt8] = Array(0..<60)

    func fragments(_ message: [UInt8], mtu: Int = 23) throws -> [[UInt8]] {
        try Framer(mtu: mtu).fragments(of: message)
    }

    /// Feeds all fragments, returning the first message completed.
    func feed(_ fragments: [[UInt8]], into reassembler: inout FrameReassembler) throws(FrameError) -> [UInt8]? {
        for fragment in fragments {
            if let message = try reassembler.receive(fragment) { return message }
        }
        return nil
    }

    @Test func rebuildsAFragmentedMessage() throws {
        var reassembler = FrameReassembler()
        #expect(try feed(fragments(message), into: &reassembler) == message)
        #expect(!reassembler.hasPartialMessage)
    }

    @Test func rejectsACorruptedByteWithBadChecksum() throws {
        var parts = try fragments(message)
        parts[1][5] ^= 0x01
        var reassembler = FrameReassembler()
        let error = #expect(throws: FrameError.self) { try feed(parts, into: &reassembler) }
        guard case .badChecksum = error else {
            Issue.record("expected badChecksum, got \(String(describing: error))")
            return
        }
    }

    @Test func reportsALostFragmentAsOutOfOrder() throws {
        var parts = try fragments(message)
        parts.remove(at: 1)
        var reassembler = FrameReassembler()
        #expect(throws: FrameError.outOfOrder(expected: 1, received: 2)) { try feed(parts, into: &reassembler) }
        #expect(!reassembler.hasPartialMessage)
    }

    @Test func reportsAContinuationWithoutAFirstFragment() throws {
        let parts = try fragments(message)
        var reassembler = FrameReassembler()
        #expect(throws: FrameError.missingFirst) { try reassembler.receive(parts[1]) }
    }

    @Test func reportsMoreBytesThanDeclaredAsOverflow() throws {
        var reassembler = FrameReassembler()
        // Declares 2 bytes, then sends 10 (checksum included) without a last flag.
        let fragment: [UInt8] = [FrameHeader.firstFlag, 2, 0] + Array(repeating: 0, count: 10)
        #expect(throws: FrameError.overflow(declared: 2, received: 8)) { try reassembler.receive(fragment) }
    }

    @Test func reportsAnEarlyLastFragmentAsLengthMismatch() throws {
        var reassembler = FrameReassembler()
        let fragment: [UInt8] = [FrameHeader.firstFlag | FrameHeader.lastFlag, 10, 0, 1, 2, 3, 4]
        #expect(throws: FrameError.lengthMismatch(declared: 10, received: 2)) { try reassembler.receive(fragment) }
    }

    @Test func refusesADeclaredLengthOverTheLimitBeforeBufferingAnything() throws {
        var reassembler = FrameReassembler(maxMessageSize: 100)
        #expect(throws: FrameError.messageTooLarge(size: 0xFFFF, limit: 100)) {
            try reassembler.receive([FrameHeader.firstFlag, 0xFF, 0xFF, 1])
        }
        #expect(!reassembler.hasPartialMessage)
    }

    @Test func reportsAFirstFragmentShorterThanItsHeader() {
        var reassembler = FrameReassembler()
        #expect(throws: FrameError.truncatedHeader) { try reassembler.receive([FrameHeader.firstFlag, 1]) }
    }

    @Test func reportsAnEmptyFragment() {
        var reassembler = FrameReassembler()
        #expect(throws: FrameError.emptyFragment) { try reassembler.receive([]) }
    }

    @Test func abandonsAnUnfinishedMessageWhenANewOneStarts() throws {
        let first = try fragments(message)
        let second = try fragments([9, 9, 9])
        var reassembler = FrameReassembler()
        _ = try reassembler.receive(first[0])
        #expect(try feed(second, into: &reassembler) == [9, 9, 9])
        #expect(reassembler.abandonedMessages == 1)
    }

    @Test func acceptsMessagesWithoutChecksumWhenTheProtocolHasNone() throws {
        let parts = try Framer(mtu: 23, checksum: .none).fragments(of: message)
        var reassembler = FrameReassembler(checksum: .none)
        #expect(try feed(parts, into: &reassembler) == message)
    }
}
