// One byte of flags and sequence on every fragment keeps the overhead at 1 of 20 bytes on the
// minimum ATT MTU; only the first fragment pays two more for the length.

/// The wire layout of a fragment's header.
///
/// ```
/// byte 0:   bit 7 FIRST, bit 6 LAST, bits 5…0 sequence (0 on the first fragment, +1 mod 64)
/// first fragment only, bytes 1…2: message length, UInt16 little-endian (checksum excluded)
/// then data: the message followed by its checksum, cut at fragment boundaries
/// ```
public enum FrameHeader {
    public static let firstFlag: UInt8 = 0x80
    public static let lastFlag: UInt8 = 0x40
    public static let sequenceMask: UInt8 = 0x3F
    /// Header bytes of a first fragment; continuations carry 1.
    public static let firstLength = 3
}
