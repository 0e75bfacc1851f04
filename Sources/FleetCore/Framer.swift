/// Splits messages into fragments that each fit one ATT write or notification (`mtu − 3`
/// bytes), in the layout of `FrameHeader`, with the configured checksum.
///
/// Pure and stateless apart from its settings: the same message always gives the same fragments.
public struct Framer: Hashable, Sendable {
    public let mtu: Int
    public let checksum: FrameChecksum
    /// Largest message accepted; at most 65535, the most the length field can say.
    public let maxMessageSize: Int

    public init(mtu: Int, checksum: FrameChecksum = .crc16CCITTFalse, maxMessageSize: Int = 4096) throws(FrameError) {
        guard mtu - 3 > FrameHeader.firstLength else { throw .mtuTooSmall(mtu: mtu) }
        self.mtu = mtu
        self.checksum = checksum
        self.maxMessageSize = min(max(0, maxMessageSize), Int(UInt16.max))
    }

    /// The largest fragment, header included.
    public var maxFragmentSize: Int { mtu - 3 }

    public func fragments(of message: [UInt8]) throws(FrameError) -> [[UInt8]] {
        guard message.count <= maxMessageSize else {
            throw .messageTooLarge(size: message.count, limit: maxMessageSize)
        }
        var data = message
        if checksum == .crc16CCITTFalse {
            let crc = CRC16CCITT.checksum(message)
            data.append(UInt8(truncatingIfNeeded: crc))
            data.append(UInt8(truncatingIfNeeded: crc >> 8))
        }
        var fragments: [[UInt8]] = []
        var offset = 0
        var sequence: UInt8 = 0
        repeat {
            let isFirst = fragments.isEmpty
            let room = maxFragmentSize - (isFirst ? FrameHeader.firstLength : 1)
            let end = min(data.count, offset + room)
            var flags = sequence & FrameHeader.sequenceMask
            if isFirst { flags |= FrameHeader.firstFlag }
            if end == data.count { flags |= FrameHeader.lastFlag }
            var fragment: [UInt8] = [flags]
            if isFirst {
                fragment.append(UInt8(truncatingIfNeeded: message.count))
                fragment.append(UInt8(truncatingIfNeeded: message.count >> 8))
            }
            fragment.append(contentsOf: data[offset..<end])
            fragments.append(fragment)
            offset = end
            sequence = (sequence &+ 1) & FrameHeader.sequenceMask
        } while offset < data.count
        return fragments
    }
}
