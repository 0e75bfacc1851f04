// Fragments come from the radio, that is from outside the process: every byte is checked before
// it is trusted, nothing is indexed without a bounds check, and memory is bounded by
// `maxMessageSize` whatever a device sends.

/// Rebuilds messages from the fragments `Framer` produces, validating order, length and checksum.
///
/// Feed fragments in arrival order; a complete, valid message is returned by the fragment that
/// ends it. Any error discards the partial message. A first fragment arriving while a message is
/// in progress abandons the old message (counted in `abandonedMessages`) and starts the new one:
/// a lost last fragment must not also cost the next message.
public struct FrameReassembler: Hashable, Sendable {
    public let checksum: FrameChecksum
    public let maxMessageSize: Int
    public private(set) var abandonedMessages = 0

    private struct Partial: Hashable, Sendable {
        var declared: Int
        var data: [UInt8]
        var nextSequence: UInt8
    }

    private var partial: Partial?

    public init(checksum: FrameChecksum = .crc16CCITTFalse, maxMessageSize: Int = 4096) {
        self.checksum = checksum
        self.maxMessageSize = min(max(0, maxMessageSize), Int(UInt16.max))
    }

    public var hasPartialMessage: Bool { partial != nil }

    /// Accepts one fragment; returns the message it completes, or nil if more are needed.
    public mutating func receive(_ fragment: [UInt8]) throws(FrameError) -> [UInt8]? {
        guard let flags = fragment.first else {
            partial = nil
            throw .emptyFragment
        }
        let sequence = flags & FrameHeader.sequenceMask
        var current: Partial
        if flags & FrameHeader.firstFlag != 0 {
            if partial != nil { abandonedMessages += 1 }
            partial = nil
            guard fragment.count >= FrameHeader.firstLength else { throw .truncatedHeader }
            guard sequence == 0 else { throw .outOfOrder(expected: 0, received: sequence) }
            let declared = Int(fragment[1]) | Int(fragment[2]) << 8
            guard declared <= maxMessageSize else { throw .messageTooLarge(size: declared, limit: maxMessageSize) }
            current = Partial(declared: declared, data: Array(fragment.dropFirst(FrameHeader.firstLength)), nextSequence: 1)
        } else {
            guard let existing = partial else { throw .missingFirst }
            partial = nil
            guard sequence == existing.nextSequence else {
                throw .outOfOrder(expected: existing.nextSequence, received: sequence)
            }
            current = existing
            current.data.append(contentsOf: fragment.dropFirst())
            current.nextSequence = (current.nextSequence &+ 1) & FrameHeader.sequenceMask
        }

        let expected = current.declared + checksum.byteCount
        guard current.data.count <= expected else {
            throw .overflow(declared: current.declared, received: current.data.count - checksum.byteCount)
        }
        guard flags & FrameHeader.lastFlag != 0 else {
            partial = current
            return nil
        }
        guard current.data.count == expected else {
            throw .lengthMismatch(declared: current.declared, received: max(0, current.data.count - checksum.byteCount))
        }
        let message = Array(current.data.prefix(current.declared))
        if checksum == .crc16CCITTFalse {
            let low = UInt16(current.data[current.declared])
            let high = UInt16(current.data[current.declared + 1])
            let received = low | high << 8
            let computed = CRC16CCITT.checksum(message)
            guard received == computed else { throw .badChecksum(expected: received, computed: computed) }
        }
        return message
    }
}
