// Commands and test vectors are built with the same primitives the reader decodes, so a round
// trip exercises both ends of every wire format.

/// Appends little-endian GATT fields to a growing byte array.
///
/// Writes of fixed-width Swift integers cannot fail. Writes whose wire field is narrower than the
/// Swift type (24- and 48-bit integers, SFLOAT, FLOAT) throw `GATTEncodeError` instead of
/// truncating.
public struct ByteWriter: Sendable {
    /// The bytes written so far.
    public private(set) var bytes: [UInt8]

    public init(capacity: Int = 16) {
        bytes = []
        bytes.reserveCapacity(capacity)
    }

    private mutating func writeLittleEndian(_ value: UInt64, byteCount: Int) {
        for position in 0..<byteCount {
            bytes.append(UInt8(truncatingIfNeeded: value >> (8 * position)))
        }
    }

    // MARK: - Integers

    public mutating func writeUInt8(_ value: UInt8) { bytes.append(value) }

    public mutating func writeUInt16(_ value: UInt16) { writeLittleEndian(UInt64(value), byteCount: 2) }

    public mutating func writeUInt24(_ value: UInt32, field: String = "uint24") throws(GATTEncodeError) {
        guard value <= 0xFF_FFFF else {
            throw GATTEncodeError(field: field, message: "\(value) does not fit in 24 bits")
        }
        writeLittleEndian(UInt64(value), byteCount: 3)
    }

    public mutating func writeUInt32(_ value: UInt32) { writeLittleEndian(UInt64(value), byteCount: 4) }

    public mutating func writeUInt40(_ value: UInt64, field: String = "uint40") throws(GATTEncodeError) {
        guard value <= 0xFF_FFFF_FFFF else {
            throw GATTEncodeError(field: field, message: "\(value) does not fit in 40 bits")
        }
        writeLittleEndian(value, byteCount: 5)
    }

    public mutating func writeUInt48(_ value: UInt64, field: String = "uint48") throws(GATTEncodeError) {
        guard value <= 0xFFFF_FFFF_FFFF else {
            throw GATTEncodeError(field: field, message: "\(value) does not fit in 48 bits")
        }
        writeLittleEndian(value, byteCount: 6)
    }

    public mutating func writeUInt64(_ value: UInt64) { writeLittleEndian(value, byteCount: 8) }

    public mutating func writeInt8(_ value: Int8) { writeUInt8(UInt8(bitPattern: value)) }

    public mutating func writeInt16(_ value: Int16) { writeUInt16(UInt16(bitPattern: value)) }

    public mutating func writeInt24(_ value: Int32, field: String = "sint24") throws(GATTEncodeError) {
        guard (-0x80_0000...0x7F_FFFF).contains(value) else {
            throw GATTEncodeError(field: field, message: "\(value) does not fit in 24 bits")
        }
        writeLittleEndian(UInt64(truncatingIfNeeded: value), byteCount: 3)
    }

    public mutating func writeInt32(_ value: Int32) { writeUInt32(UInt32(bitPattern: value)) }

    public mutating func writeInt48(_ value: Int64, field: String = "sint48") throws(GATTEncodeError) {
        guard (-0x8000_0000_0000...0x7FFF_FFFF_FFFF).contains(value) else {
            throw GATTEncodeError(field: field, message: "\(value) does not fit in 48 bits")
        }
        writeLittleEndian(UInt64(bitPattern: value), byteCount: 6)
    }

    public mutating func writeInt64(_ value: Int64) { writeUInt64(UInt64(bitPattern: value)) }

    // MARK: - IEEE 11073 floats

    public mutating func writeSFLOAT(_ value: MedicalFloat, field: String = "sfloat") throws(GATTEncodeError) {
        guard let bits = value.sfloatBits else {
            throw GATTEncodeError(field: field, message: "\(value) is not representable as SFLOAT")
        }
        writeUInt16(bits)
    }

    public mutating func writeFLOAT(_ value: MedicalFloat, field: String = "float") throws(GATTEncodeError) {
        guard let bits = value.floatBits else {
            throw GATTEncodeError(field: field, message: "\(value) is not representable as FLOAT")
        }
        writeUInt32(bits)
    }

    // MARK: - Bytes and strings

    public mutating func writeBytes(_ values: some Sequence<UInt8>) { bytes.append(contentsOf: values) }

    /// The string's UTF-8 bytes, without a terminator (GATT strings are length-delimited).
    public mutating func writeUTF8(_ value: String) { bytes.append(contentsOf: value.utf8) }
}
