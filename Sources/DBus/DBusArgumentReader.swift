import CDBus

/// A cursor over the arguments of a received message (or the elements of one of its
/// containers), reading values in place from libdbus's buffer: no `DBusValue` is built, and a
/// string compared with `readString(equalTo:)` is never copied.
///
/// Readers exist only inside `DBusMessageReader.withArguments` and the container methods below,
/// passed `inout` to a closure: the type is `~Copyable` and has no public initializer, so a
/// reader cannot be kept beyond the closure, and the message it points into outlives it.
///
/// Every read checks the type first and throws `DBusDecodingError` on a mismatch or at the end,
/// never reading a value as something it is not. After an error, stop reading: the position is
/// then unspecified. Containers need not be read to their end; leaving one skips the rest.
public struct DBusArgumentReader: ~Copyable {
    @usableFromInline var iter: DBusMessageIter
    /// libdbus's type code of the value at the cursor, once asked for (0 at the end).
    private var knownCode: Int32?
    /// Set by a read: the cursor moves past the value read only when the next one is looked at.
    /// libdbus steps over a container by walking it, and the last value of a container (often
    /// the only one read) never needs stepping over.
    private var mustStep = false
    /// For a reader over an array's elements: the array's size in bytes (see `arrayByteCount`).
    private let arraySize: Int?

    @usableFromInline init(iter: DBusMessageIter) {
        self.iter = iter
        arraySize = nil
    }

    /// A reader over the elements of an array; `iter` is libdbus's iterator into it, the only
    /// kind from which libdbus tells an array's size.
    private init(arrayContents iter: DBusMessageIter) {
        self.iter = iter
        var start = iter
        arraySize = Int(wearfleet_dbus_iter_array_byte_length(&start))
    }

    /// The type code of the value at the cursor, after any step a read left pending.
    private mutating func code() -> Int32 {
        if mustStep {
            dbus_message_iter_next(&iter)
            mustStep = false
            knownCode = nil
        }
        if let knownCode { return knownCode }
        let code = dbus_message_iter_get_arg_type(&iter)
        knownCode = code
        return code
    }

    /// True when every argument (or element) has been read.
    public var isAtEnd: Bool {
        mutating get { code() == 0 }
    }

    /// Whether the next value has exactly `type`. False at the end.
    public mutating func nextIs(_ type: DBusType) -> Bool {
        guard code() == Int32(type.code) else { return false }
        switch type {
        case .array(let element) where element.isBasic:
            return dbus_message_iter_get_element_type(&iter) == Int32(element.code)
        case .array, .dictionary, .structure:
            return nextSignature() == type.signature
        default:
            return true
        }
    }

    /// The next value's complete signature (`ay`, `a{sv}`), nil at the end.
    public mutating func nextSignature() -> String? {
        guard code() != 0, let signature = dbus_message_iter_get_signature(&iter) else { return nil }
        defer { dbus_free(signature) }
        return String(cString: signature)
    }

    // MARK: - Basic values

    /// Reads a string (`s`).
    public mutating func readString() throws(DBusDecodingError) -> String {
        String(cString: try stringPointer(UInt8(ascii: "s")))
    }

    /// Reads a string (`s`) and tells whether it is exactly `expected`, without copying it.
    public mutating func readString(equalTo expected: String) throws(DBusDecodingError) -> Bool {
        CStringComparison.equal(try stringPointer(UInt8(ascii: "s")), expected)
    }

    /// Reads an object path (`o`).
    public mutating func readObjectPath() throws(DBusDecodingError) -> DBusObjectPath {
        // libdbus validated the path when the message arrived.
        DBusObjectPath(validated: String(cString: try stringPointer(UInt8(ascii: "o"))))
    }

    /// Reads a byte array (`ay`) in one copy.
    public mutating func readBytes() throws(DBusDecodingError) -> [UInt8] {
        guard code() == Int32(UInt8(ascii: "a")), dbus_message_iter_get_element_type(&iter) == Int32(UInt8(ascii: "y")) else {
            throw mismatch(expected: "ay")
        }
        var elements = DBusMessageIter()
        dbus_message_iter_recurse(&iter, &elements)
        var pointer: UnsafeRawPointer? = nil
        var count: Int32 = 0
        withUnsafeMutablePointer(to: &pointer) { dbus_message_iter_get_fixed_array(&elements, $0, &count) }
        mustStep = true
        guard let pointer, count > 0 else { return [] }
        return [UInt8](UnsafeRawBufferPointer(start: pointer, count: Int(count)))
    }

    /// Reads the next value, whatever its type, as a `DBusValue` (the generic decoding, for the
    /// parts of a message that are not worth reading by hand).
    public mutating func readValue() throws(DBusDecodingError) -> DBusValue {
        guard let signature = nextSignature() else { throw mismatch(expected: "a value") }
        let type: DBusType
        do {
            type = try DBusType(parsing: signature)
        } catch {
            throw DBusDecodingError(expected: "a complete type", actual: signature)
        }
        let value: DBusValue
        do {
            value = try MessageCodec.readValue(&iter, type)
        } catch let error as DBusDecodingError {
            throw error
        } catch {
            throw DBusDecodingError(expected: signature, actual: "\(error)")
        }
        mustStep = true
        return value
    }

    /// Skips the next value, whatever it is.
    public mutating func skip() throws(DBusDecodingError) {
        guard code() != 0 else { throw mismatch(expected: "a value") }
        mustStep = true
    }

    /// For a reader over an array's elements (in `readArray`): the array's size in bytes as the
    /// message carries it (the padding before its first element excluded), whatever has been
    /// read of it; 0 for an empty array. Nil for any other reader. Constant time: checking an
    /// array's shape with it (one element of a known size, or none) saves walking the elements,
    /// which is what libdbus does to count them or to step over them.
    public var arrayByteCount: Int? { arraySize }

    // MARK: - Containers

    /// Reads an array (`a…`, dictionaries included): `body` gets a reader over its elements
    /// (for a dictionary, its entries: see `readDictEntry`).
    @inlinable
    public mutating func readArray<Result>(
        _ body: (inout DBusArgumentReader) throws(DBusDecodingError) -> Result
    ) throws(DBusDecodingError) -> Result {
        var elements = try enter(UInt8(ascii: "a"))
        return try body(&elements)
    }

    /// Reads one dictionary entry (`{kv}`, inside `readArray`): `body` gets a reader over its
    /// key and value.
    @inlinable
    public mutating func readDictEntry<Result>(
        _ body: (inout DBusArgumentReader) throws(DBusDecodingError) -> Result
    ) throws(DBusDecodingError) -> Result {
        var pair = try enter(UInt8(ascii: "e"))
        return try body(&pair)
    }

    /// Reads a variant (`v`): `body` gets a reader over the one value inside (check its type
    /// with `nextIs`).
    @inlinable
    public mutating func readVariant<Result>(
        _ body: (inout DBusArgumentReader) throws(DBusDecodingError) -> Result
    ) throws(DBusDecodingError) -> Result {
        var inner = try enter(UInt8(ascii: "v"))
        return try body(&inner)
    }

    /// Reads a struct (`(…)`): `body` gets a reader over its fields.
    @inlinable
    public mutating func readStruct<Result>(
        _ body: (inout DBusArgumentReader) throws(DBusDecodingError) -> Result
    ) throws(DBusDecodingError) -> Result {
        var fields = try enter(UInt8(ascii: "r"))
        return try body(&fields)
    }

    // MARK: - Internals

    /// A reader over the contents of the container at the cursor, which must have type `code`;
    /// the cursor then counts the container as read.
    @usableFromInline
    mutating func enter(_ code: UInt8) throws(DBusDecodingError) -> DBusArgumentReader {
        guard self.code() == Int32(code) else { throw mismatch(expected: String(UnicodeScalar(code))) }
        var contents = DBusMessageIter()
        dbus_message_iter_recurse(&iter, &contents)
        mustStep = true
        return code == UInt8(ascii: "a") ? DBusArgumentReader(arrayContents: contents) : DBusArgumentReader(iter: contents)
    }

    /// The C string at the cursor when it has type `code` (`s`, `o`, `g`). The pointer is into
    /// the message: valid only while the message is.
    private mutating func stringPointer(_ code: UInt8) throws(DBusDecodingError) -> UnsafePointer<CChar> {
        guard self.code() == Int32(code) else { throw mismatch(expected: String(UnicodeScalar(code))) }
        var pointer: UnsafePointer<CChar>? = nil
        withUnsafeMutablePointer(to: &pointer) { dbus_message_iter_get_basic(&iter, $0) }
        guard let pointer else { throw mismatch(expected: String(UnicodeScalar(code))) }
        mustStep = true
        return pointer
    }

    private mutating func mismatch(expected: String) -> DBusDecodingError {
        DBusDecodingError(expected: expected, actual: nextSignature() ?? "nothing")
    }
}
