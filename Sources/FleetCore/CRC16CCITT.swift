// CRC-16/CCITT-FALSE because it is what most wearable vendors' framed protocols use and its
// 16 bits cost little on a 20-byte ATT payload; computed bitwise, since messages are small.

/// CRC-16/CCITT-FALSE: polynomial 0x1021, initial value 0xFFFF, no reflection, no final XOR.
/// Check value: `checksum("123456789") == 0x29B1`.
public enum CRC16CCITT {
    public static let initialValue: UInt16 = 0xFFFF

    public static func checksum(_ bytes: some Sequence<UInt8>) -> UInt16 {
        update(initialValue, with: bytes)
    }

    /// Continues a checksum over more bytes, for data that arrives in pieces.
    public static func update(_ crc: UInt16, with bytes: some Sequence<UInt8>) -> UInt16 {
        var crc = crc
        for byte in bytes {
            crc ^= UInt16(byte) << 8
            for _ in 0..<8 {
                crc = crc & 0x8000 != 0 ? (crc << 1) ^ 0x1021 : crc << 1
            }
        }
        return crc
    }
}
