/// The integrity check a framed protocol uses, appended after the message and split across
/// fragments with it.
public enum FrameChecksum: Hashable, Sendable {
    /// No checksum: the link layer's own CRC is all there is.
    case none
    /// `CRC16CCITT` of the message, two bytes, little-endian (Bluetooth byte order).
    case crc16CCITTFalse

    public var byteCount: Int {
        switch self {
        case .none: 0
        case .crc16CCITTFalse: 2
        }
    }
}
