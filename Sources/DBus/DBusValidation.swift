// libdbus validates its inputs with assertions that abort the whole process. Everything that
// reaches libdbus from Swift passes through these checks first, following the rules in the
// D-Bus specification ("Valid Names", "Valid Object Paths").

/// A name, path or string that D-Bus would reject.
public struct DBusValidationError: Error, Hashable, Sendable, CustomStringConvertible {
    public enum Kind: String, Sendable {
        case objectPath = "object path"
        case busName = "bus name"
        case interfaceName = "interface name"
        case memberName = "member name"
        case errorName = "error name"
        case string = "string"
        case signature = "signature"
    }

    public let kind: Kind
    public let value: String
    public let reason: String

    public var description: String { "invalid \(kind.rawValue) \"\(value)\": \(reason)" }
}

/// The validation rules, one function per kind of name.
public enum DBusValidation {
    static let maximumNameLength = 255

    private static func isAlpha(_ c: UInt8) -> Bool {
        (c >= UInt8(ascii: "a") && c <= UInt8(ascii: "z")) || (c >= UInt8(ascii: "A") && c <= UInt8(ascii: "Z"))
    }

    private static func isDigit(_ c: UInt8) -> Bool { c >= UInt8(ascii: "0") && c <= UInt8(ascii: "9") }

    private static func isPathChar(_ c: UInt8) -> Bool { isAlpha(c) || isDigit(c) || c == UInt8(ascii: "_") }

    public static func checkObjectPath(_ path: String) throws(DBusValidationError) {
        func fail(_ reason: String) -> DBusValidationError { .init(kind: .objectPath, value: path, reason: reason) }
        let bytes = Array(path.utf8)
        guard bytes.first == UInt8(ascii: "/") else { throw fail("must start with '/'") }
        if bytes.count == 1 { return }
        guard bytes.last != UInt8(ascii: "/") else { throw fail("must not end with '/'") }
        var previousWasSlash = false
        for c in bytes {
            if c == UInt8(ascii: "/") {
                guard !previousWasSlash else { throw fail("empty element ('//')") }
                previousWasSlash = true
            } else {
                guard isPathChar(c) else { throw fail("elements may only contain [A-Za-z0-9_]") }
                previousWasSlash = false
            }
        }
    }

    /// A unique (`:1.42`) or well-known (`org.bluez`) bus name.
    public static func checkBusName(_ name: String) throws(DBusValidationError) {
        func fail(_ reason: String) -> DBusValidationError { .init(kind: .busName, value: name, reason: reason) }
        let bytes = Array(name.utf8)
        guard !bytes.isEmpty else { throw fail("empty") }
        guard bytes.count <= maximumNameLength else { throw fail("longer than 255 bytes") }
        let unique = bytes[0] == UInt8(ascii: ":")
        let body = unique ? bytes.dropFirst() : bytes[...]
        let elements = body.split(separator: UInt8(ascii: "."), omittingEmptySubsequences: false)
        guard elements.count >= 2 else { throw fail("needs at least two elements separated by '.'") }
        for element in elements {
            guard !element.isEmpty else { throw fail("empty element") }
            if !unique, let first = element.first, isDigit(first) {
                throw fail("elements of a well-known name must not start with a digit")
            }
            for c in element where !(isPathChar(c) || c == UInt8(ascii: "-")) {
                throw fail("elements may only contain [A-Za-z0-9_-]")
            }
        }
    }

    public static func checkInterfaceName(_ name: String) throws(DBusValidationError) {
        try checkDottedName(name, kind: .interfaceName)
    }

    public static func checkErrorName(_ name: String) throws(DBusValidationError) {
        try checkDottedName(name, kind: .errorName)
    }

    public static func checkMemberName(_ name: String) throws(DBusValidationError) {
        func fail(_ reason: String) -> DBusValidationError { .init(kind: .memberName, value: name, reason: reason) }
        let bytes = Array(name.utf8)
        guard !bytes.isEmpty else { throw fail("empty") }
        guard bytes.count <= maximumNameLength else { throw fail("longer than 255 bytes") }
        guard !isDigit(bytes[0]) else { throw fail("must not start with a digit") }
        for c in bytes where !isPathChar(c) { throw fail("may only contain [A-Za-z0-9_]") }
    }

    /// Strings must be valid UTF-8 (a Swift `String` always is) without NUL bytes.
    public static func checkString(_ string: String) throws(DBusValidationError) {
        if string.utf8.contains(0) {
            throw DBusValidationError(kind: .string, value: string.replacingNUL, reason: "contains a NUL byte")
        }
    }

    public static func checkSignature(_ signature: String) throws(DBusValidationError) {
        do {
            _ = try DBusType.parseList(signature)
        } catch {
            throw DBusValidationError(kind: .signature, value: signature, reason: error.reason)
        }
    }

    private static func checkDottedName(_ name: String, kind: DBusValidationError.Kind) throws(DBusValidationError) {
        func fail(_ reason: String) -> DBusValidationError { .init(kind: kind, value: name, reason: reason) }
        let bytes = Array(name.utf8)
        guard !bytes.isEmpty else { throw fail("empty") }
        guard bytes.count <= maximumNameLength else { throw fail("longer than 255 bytes") }
        let elements = bytes.split(separator: UInt8(ascii: "."), omittingEmptySubsequences: false)
        guard elements.count >= 2 else { throw fail("needs at least two elements separated by '.'") }
        for element in elements {
            guard let first = element.first else { throw fail("empty element") }
            guard !isDigit(first) else { throw fail("elements must not start with a digit") }
            for c in element where !isPathChar(c) { throw fail("elements may only contain [A-Za-z0-9_]") }
        }
    }
}

extension String {
    /// The string with NUL bytes shown as `\0`, so an error message can quote it safely.
    fileprivate var replacingNUL: String {
        String(decoding: utf8.flatMap { $0 == 0 ? Array("\\0".utf8) : [$0] }, as: UTF8.self)
    }
}
