// The only code in GATT that indexes into a payload. Decoders go through it, so the bounds check
// lives in one place and every failure names its field and offset.

/// A forward-only cursor over an untrusted byte payload.
///
/// Every read checks the remaining length first and throws `GATTDecodeError` (never traps) when
/// the payload is too short. Multi-byte integers are little-endian, as in all GATT
/// characteristics. The reader does not copy the payload: it walks the collection it was given,
/// and `readBytes`/`readRemainingBytes` return slices of it.
public struct ByteReader<Bytes: Collection<UInt8>> {
    private let bytes: Bytes
    private var index: Bytes.Index
    private let count: Int

    /// Bytes consumed so far: the offset of the next read within the payload.
    public private(set) var offset: Int

    public init(_ bytes: Bytes) {
        self.bytes = bytes
        self.index = bytes.startIndex
        self.count = bytes.count
        self.offset = 0
    }

    /// Bytes not yet read.
    public var remainingCount: Int { count - offset }

    /// True when every byte has been read.
    public var isAtEnd: Bool { offset == count }

    // MARK: - Primitives

    private func require(_ needed: Int, _ field: StaticString) throws(GATTDecodeError) {
        guard needed <= remainingCount else {
            throw GATTDecodeError(
                field: String(describing: field), offset: offset,
                reason: .truncated(needed: needed, available: remainingCount))
        }
    }

    /// Reads `byteCount` (0...8) bytes as an unsigned little-endian integer.
    private mutating func readLittleEndian(_ byteCount: Int, _ field: StaticString) throws(GATTDecodeError) -> UInt64 {
        try require(byteCount, field)
        var value: UInt64 = 0
        for position in 0..<byteCount {
            value |= UInt64(bytes[index]) << (8 * position)
            bytes.formIndex(after: &index)
        }
        offset += byteCount
        return value
    }

    /// Sign-extends the low `bits` bits of `value`.
    private static func signExtend(_ value: UInt64, bits: Int) -> Int64 {
        let shift = 64 - bits
        return Int64(bitPattern: value << shift) >> shift
    }

    // MARK: - Unsigned integers

    public mutating func readUInt8(_ field: StaticString) throws(GATTDecodeError) -> UInt8 {
        try require(1, field)
        let byte = bytes[index]
        bytes.formIndex(after: &index)
        offset += 1
        return byte
    }

    public mutating func readUInt16(_ field: StaticString) throws(GATTDecodeError) -> UInt16 {
        UInt16(truncatingIfNeeded: try readLittleEndian(2, field))
    }

    /// A 24-bit unsigned integer, widened to `UInt32`.
    public mutating func readUInt24(_ field: StaticString) throws(GATTDecodeError) -> UInt32 {
        UInt32(truncatingIfNeeded: try readLittleEndian(3, field))
    }

    public mutating func readUInt32(_ field: StaticString) throws(GATTDecodeError) -> UInt32 {
        UInt32(truncatingIfNeeded: try readLittleEndian(4, field))
    }

    /// A 40-bit unsigned integer (System ID's manufacturer identifier), widened to `UInt64`.
    public mutating func readUInt40(_ field: StaticString) throws(GATTDecodeError) -> UInt64 {
        try readLittleEndian(5, field)
    }

    /// A 48-bit unsigned integer, widened to `UInt64`.
    public mutating func readUInt48(_ field: StaticString) throws(GATTDecodeError) -> UInt64 {
        try readLittleEndian(6, field)
    }

    public mutating func readUInt64(_ field: StaticString) throws(GATTDecodeError) -> UInt64 {
        try readLittleEndian(8, field)
    }

    // MARK: - Signed integers

    public mutating func readInt8(_ field: StaticString) throws(GATTDecodeError) -> Int8 {
        Int8(bitPattern: try readUInt8(field))
    }

    public mutating func readInt16(_ field: StaticString) throws(GATTDecodeError) -> Int16 {
        Int16(bitPattern: try readUInt16(field))
    }

    /// A 24-bit two's-complement integer, sign-extended to `Int32`.
    public mutating func readInt24(_ field: StaticString) throws(GATTDecodeError) -> Int32 {
        Int32(truncatingIfNeeded: Self.signExtend(try readLittleEndian(3, field), bits: 24))
    }

    public mutating func readInt32(_ field: StaticString) throws(GATTDecodeError) -> Int32 {
        Int32(bitPattern: try readUInt32(field))
    }

    /// A 48-bit two's-complement integer, sign-extended to `Int64`.
    public mutating func readInt48(_ field: StaticString) throws(GATTDecodeError) -> Int64 {
        Self.signExtend(try readLittleEndian(6, field), bits: 48)
    }

    public mutating func readInt64(_ field: StaticString) throws(GATTDecodeError) -> Int64 {
        Int64(bitPattern: try readLittleEndian(8, field))
    }

    // MARK: - IEEE 11073 floats

    /// A 16-bit IEEE 11073 SFLOAT; special values decode to their own `MedicalFloat` cases.
    public mutating func readSFLOAT(_ field: StaticString) throws(GATTDecodeError) -> MedicalFloat {
        MedicalFloat(sfloatBits: try readUInt16(field))
    }

    /// A 32-bit IEEE 11073 FLOAT; special values decode to their own `MedicalFloat` cases.
    public mutating func readFLOAT(_ field: StaticString) throws(GATTDecodeError) -> MedicalFloat {
        MedicalFloat(floatBits: try readUInt32(field))
    }

    // MARK: - Bytes and strings

    /// The next `byteCount` bytes, as a slice of the payload (no copy).
    public mutating func readBytes(_ byteCount: Int, _ field: StaticString) throws(GATTDecodeError) -> Bytes.SubSequence {
        try require(byteCount, field)
        let end = bytes.index(index, offsetBy: byteCount)
        defer {
            index = end
            offset += byteCount
        }
        return bytes[index..<end]
    }

    /// Everything not read yet, as a slice of the payload (no copy). Never throws.
    public mutating func readRemainingBytes() -> Bytes.SubSequence {
        defer {
            index = bytes.endIndex
            offset = count
        }
        return bytes[index...]
    }

    /// The next `byteCount` bytes as UTF-8. Ill-formed UTF-8 (including overlong forms and
    /// encoded surrogates) throws `.invalidUTF8` at the string's first byte; nothing is replaced.
    public mutating func readUTF8(_ byteCount: Int, _ field: StaticString) throws(GATTDecodeError) -> String {
        let start = offset
        let slice = try readBytes(byteCount, field)
        return try Self.validatedString(slice, field: field, offset: start)
    }

    /// The rest of the payload as UTF-8, validated like `readUTF8`.
    public mutating func readRemainingUTF8(_ field: StaticString) throws(GATTDecodeError) -> String {
        let start = offset
        let slice = readRemainingBytes()
        return try Self.validatedString(slice, field: field, offset: start)
    }

    private static func validatedString(
        _ slice: Bytes.SubSequence, field: StaticString, offset: Int
    ) throws(GATTDecodeError) -> String {
        var iterator = slice.makeIterator()
        var parser = UTF8()
        scan: while true {
            switch parser.decode(&iterator) {
            case .scalarValue: continue
            case .emptyInput: break scan
            case .error:
                throw GATTDecodeError(field: String(describing: field), offset: offset, reason: .invalidUTF8)
            }
        }
        return String(decoding: slice, as: UTF8.self)
    }
}

extension ByteReader: Sendable where Bytes: Sendable, Bytes.Index: Sendable {}
