/// Why a message could not be framed or a fragment could not be accepted. Every reassembly error
/// discards the partial message, so the next message starts clean.
public enum FrameError: Error, Hashable, Sendable {
    /// `mtu − 3` leaves no room for the 3-byte header and at least one byte of data.
    case mtuTooSmall(mtu: Int)
    /// A message (to send, or as declared by a first fragment) is longer than the limit.
    case messageTooLarge(size: Int, limit: Int)
    case emptyFragment
    /// A first fragment shorter than its 3-byte header.
    case truncatedHeader
    /// A continuation arrived with no message in progress.
    case missingFirst
    /// A fragment's sequence number is not the next one expected (a fragment was lost or
    /// repeated).
    case outOfOrder(expected: UInt8, received: UInt8)
    /// More bytes arrived than the first fragment declared.
    case overflow(declared: Int, received: Int)
    /// The last fragment arrived before all declared bytes did.
    case lengthMismatch(declared: Int, received: Int)
    case badChecksum(expected: UInt16, computed: UInt16)
}
