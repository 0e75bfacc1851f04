/// One field of a native journald entry: a validated name and an arbitrary byte value.
///
/// Guarantees: `name` is always a valid journald field name (upper-case `A`–`Z`, `0`–`9` and `_`,
/// not starting with `_` or a digit, at most 64 characters). Names starting with `_` are trusted
/// fields that journald sets itself, and an invalid name makes journald drop the field (or the
/// whole entry), so the only way to build a field from untrusted text is `sanitizedName(_:)`.
public struct JournalField: Hashable, Sendable {
    /// journald rejects longer names (`JOURNAL_FIELD_NAME_MAX` in systemd 252 is 64).
    public static let maximumNameLength = 64

    public let name: String
    /// UTF-8 text or raw bytes; may contain newlines (the native protocol carries them).
    public let value: [UInt8]

    /// A field with a name that is already valid; nil otherwise (never a silently fixed name).
    public init?(name: String, value: [UInt8]) {
        guard Self.isValidName(name) else { return nil }
        self.name = name
        self.value = value
    }

    public init?(name: String, value: String) {
        self.init(name: name, value: Array(value.utf8))
    }

    /// The value as text, for tests and diagnostics (invalid UTF-8 is repaired).
    public var text: String { String(decoding: value, as: UTF8.self) }

    /// Whether journald accepts `name` as a field a client may send.
    public static func isValidName(_ name: String) -> Bool {
        let bytes = Array(name.utf8)
        guard let first = bytes.first, bytes.count <= maximumNameLength else { return false }
        guard isUpper(first) else { return false }
        return bytes.allSatisfy { isUpper($0) || isDigit($0) || $0 == UInt8(ascii: "_") }
    }

    /// Maps a swift-log metadata key to a journald field name, or nil when nothing usable is left.
    ///
    /// `device.address`, `device_address`, `deviceAddress` and `Device-Address` all become
    /// `DEVICE_ADDRESS`: camel-case humps and every character journald does not allow become one
    /// underscore, and leading underscores and digits are dropped (a leading `_` would claim to be a
    /// trusted field). The result is cut to 64 characters.
    public static func sanitizedName(_ key: String) -> String? {
        var out: [UInt8] = []
        out.reserveCapacity(key.utf8.count)
        var previousWasLowerOrDigit = false
        for byte in key.utf8 {
            let isLowerByte = byte >= UInt8(ascii: "a") && byte <= UInt8(ascii: "z")
            if isUpper(byte) {
                // A hump in camelCase starts a new word.
                if previousWasLowerOrDigit { appendSeparator(&out) }
                out.append(byte)
                previousWasLowerOrDigit = false
            } else if isLowerByte {
                out.append(byte - 32)
                previousWasLowerOrDigit = true
            } else if isDigit(byte) {
                out.append(byte)
                previousWasLowerOrDigit = true
            } else {
                appendSeparator(&out)
                previousWasLowerOrDigit = false
            }
        }
        // Leading `_` or digits are not allowed; trailing separators carry nothing.
        while let first = out.first, first == UInt8(ascii: "_") || isDigit(first) { out.removeFirst() }
        while out.last == UInt8(ascii: "_") { out.removeLast() }
        if out.count > maximumNameLength {
            out.removeLast(out.count - maximumNameLength)
            while out.last == UInt8(ascii: "_") { out.removeLast() }
        }
        guard !out.isEmpty else { return nil }
        let name = String(decoding: out, as: UTF8.self)
        return isValidName(name) ? name : nil
    }

    private static func appendSeparator(_ out: inout [UInt8]) {
        // Runs of separators collapse, so `device..address` does not become `DEVICE__ADDRESS`.
        if let last = out.last, last != UInt8(ascii: "_") { out.append(UInt8(ascii: "_")) }
    }

    private static func isUpper(_ byte: UInt8) -> Bool { byte >= UInt8(ascii: "A") && byte <= UInt8(ascii: "Z") }
    private static func isDigit(_ byte: UInt8) -> Bool { byte >= UInt8(ascii: "0") && byte <= UInt8(ascii: "9") }
}
