// The value records leave the daemon at notification rate, so their JSON is written straight into
// bytes in a fixed key order: no Foundation encoder, no intermediate dictionary, and the same
// record always reads the same way.

/// A compact JSON object written key by key, in the order the keys are added.
///
/// Strings are escaped per RFC 8259 (quote, backslash and the control characters below U+0020;
/// everything else is copied as UTF-8). `number(_:_:)` takes decimal text and writes it as a JSON
/// number only when it is one (`-?(0|[1-9][0-9]*)(\.[0-9]+)?`); any other text (`nan`, `+inf`,
/// `unsuccessful`, …) is written as a string, so a field documented as a number is a number or
/// a string naming why there is none, and the output is always valid JSON.
public struct JSONObjectWriter: Sendable {
    private var buffer: [UInt8]
    private var empty = true

    public init(capacity: Int = 256) {
        buffer = []
        buffer.reserveCapacity(capacity)
        buffer.append(UInt8(ascii: "{"))
    }

    /// Finishes the object and returns its bytes without copying them.
    public consuming func finish() -> [UInt8] {
        buffer.append(UInt8(ascii: "}"))
        return buffer
    }

    public mutating func string(_ key: String, _ value: String) {
        self.key(key)
        Self.appendString(value, to: &buffer)
    }

    /// `text` as a JSON number when it is one, else as a string.
    public mutating func number(_ key: String, _ text: String) {
        self.key(key)
        Self.appendNumber(text, to: &buffer)
    }

    public mutating func integer(_ key: String, _ value: some BinaryInteger) {
        self.key(key)
        buffer.append(contentsOf: String(value).utf8)
    }

    public mutating func bool(_ key: String, _ value: Bool) {
        self.key(key)
        buffer.append(contentsOf: (value ? "true" : "false").utf8)
    }

    /// An array of numbers (each as `number(_:_:)` writes it).
    public mutating func numbers(_ key: String, _ texts: some Sequence<some StringProtocol>) {
        self.key(key)
        appendArray(texts) { Self.appendNumber(String($1), to: &$0) }
    }

    public mutating func strings(_ key: String, _ texts: some Sequence<some StringProtocol>) {
        self.key(key)
        appendArray(texts) { Self.appendString(String($1), to: &$0) }
    }

    /// Bytes as a string of lower-case hex digits, two per byte.
    public mutating func hex(_ key: String, _ bytes: some Sequence<UInt8>) {
        self.key(key)
        buffer.append(UInt8(ascii: "\""))
        for byte in bytes {
            buffer.append(Self.hexDigits[Int(byte >> 4)])
            buffer.append(Self.hexDigits[Int(byte & 0x0F)])
        }
        buffer.append(UInt8(ascii: "\""))
    }

    /// `null`: a key a reader may look up whose value is not known (a template that reads a
    /// missing key is warned about; one that reads `null` is not).
    public mutating func null(_ key: String) {
        self.key(key)
        buffer.append(contentsOf: "null".utf8)
    }

    /// An array of objects.
    public mutating func objects(_ key: String, _ objects: some Sequence<JSONObjectWriter>) {
        self.key(key)
        appendArray(objects) { $1.appendObject(to: &$0) }
    }

    /// A nested object.
    public mutating func object(_ key: String, _ object: JSONObjectWriter) {
        self.key(key)
        object.appendObject(to: &buffer)
    }

    /// Appends the finished object to `output`: for a writer of records that assembles them
    /// from parts (`finish()` would hand over a buffer only for it to be copied).
    public func appendObject(to output: inout [UInt8]) {
        output.append(contentsOf: buffer)
        output.append(UInt8(ascii: "}"))
    }

    // MARK: - Writing

    private mutating func key(_ key: String) {
        if empty { empty = false } else { buffer.append(UInt8(ascii: ",")) }
        Self.appendString(key, to: &buffer)
        buffer.append(UInt8(ascii: ":"))
    }

    private mutating func appendArray<Element>(_ elements: some Sequence<Element>, _ append: (inout [UInt8], Element) -> Void) {
        buffer.append(UInt8(ascii: "["))
        var first = true
        for element in elements {
            if first { first = false } else { buffer.append(UInt8(ascii: ",")) }
            append(&buffer, element)
        }
        buffer.append(UInt8(ascii: "]"))
    }

    private static let hexDigits = Array("0123456789abcdef".utf8)

    /// `text` as a JSON string (quoted, escaped as above) at the end of `buffer`.
    public static func appendString(_ text: String, to buffer: inout [UInt8]) {
        buffer.append(UInt8(ascii: "\""))
        // Nearly every string (keys, addresses, UUIDs, names) needs no escape: copied at once.
        if !text.utf8.contains(where: { $0 < 0x20 || $0 == UInt8(ascii: "\"") || $0 == UInt8(ascii: "\\") }) {
            buffer.append(contentsOf: text.utf8)
            buffer.append(UInt8(ascii: "\""))
            return
        }
        for byte in text.utf8 {
            switch byte {
            case UInt8(ascii: "\""): buffer.append(contentsOf: [UInt8(ascii: "\\"), UInt8(ascii: "\"")])
            case UInt8(ascii: "\\"): buffer.append(contentsOf: [UInt8(ascii: "\\"), UInt8(ascii: "\\")])
            case 0x0A: buffer.append(contentsOf: [UInt8(ascii: "\\"), UInt8(ascii: "n")])
            case 0x0D: buffer.append(contentsOf: [UInt8(ascii: "\\"), UInt8(ascii: "r")])
            case 0x09: buffer.append(contentsOf: [UInt8(ascii: "\\"), UInt8(ascii: "t")])
            case 0..<0x20:
                buffer.append(contentsOf: Array("\\u00".utf8))
                buffer.append(hexDigits[Int(byte >> 4)])
                buffer.append(hexDigits[Int(byte & 0x0F)])
            default: buffer.append(byte)
            }
        }
        buffer.append(UInt8(ascii: "\""))
    }

    static func appendNumber(_ text: String, to buffer: inout [UInt8]) {
        if isJSONNumber(text) {
            buffer.append(contentsOf: text.utf8)
        } else {
            appendString(text, to: &buffer)
        }
    }

    /// True for `-?(0|[1-9][0-9]*)(\.[0-9]+)?`, the decimal forms this module renders.
    static func isJSONNumber(_ text: String) -> Bool {
        var bytes = text.utf8[...]
        if bytes.first == UInt8(ascii: "-") { bytes = bytes.dropFirst() }
        let isDigit = { (byte: UInt8) in (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(byte) }
        let integer = bytes.prefix(while: isDigit)
        guard let lead = integer.first, lead != UInt8(ascii: "0") || integer.count == 1 else { return false }
        bytes = bytes.dropFirst(integer.count)
        guard let dot = bytes.first else { return true }
        guard dot == UInt8(ascii: "."), bytes.count > 1 else { return false }
        return bytes.dropFirst().allSatisfy(isDigit)
    }
}
