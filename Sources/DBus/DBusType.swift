// The D-Bus type system as a Swift value, parsed from and printed to signature strings.
// libdbus's DBUS_TYPE_* constants are `((int) 'y')` macros that do not import into Swift,
// so the type codes are spelled out here once.

/// One complete D-Bus type, such as `s`, `a{sv}` or `(iiu)`.
///
/// Parsing a signature never traps: malformed or over-deep signatures are reported as
/// `DBusSignatureError`, so signatures read from the bus can be parsed safely.
public indirect enum DBusType: Hashable, Sendable, CustomStringConvertible {
    case byte, boolean, int16, uint16, int32, uint32, int64, uint64, double
    case string, objectPath, signature, unixFD
    case variant
    case array(DBusType)
    /// `a{KV}`: a dictionary; the key must be a basic type.
    case dictionary(key: DBusType, value: DBusType)
    case structure([DBusType])

    /// The ASCII type code libdbus uses for this type's first character.
    public var code: UInt8 {
        switch self {
        case .byte: return UInt8(ascii: "y")
        case .boolean: return UInt8(ascii: "b")
        case .int16: return UInt8(ascii: "n")
        case .uint16: return UInt8(ascii: "q")
        case .int32: return UInt8(ascii: "i")
        case .uint32: return UInt8(ascii: "u")
        case .int64: return UInt8(ascii: "x")
        case .uint64: return UInt8(ascii: "t")
        case .double: return UInt8(ascii: "d")
        case .string: return UInt8(ascii: "s")
        case .objectPath: return UInt8(ascii: "o")
        case .signature: return UInt8(ascii: "g")
        case .unixFD: return UInt8(ascii: "h")
        case .variant: return UInt8(ascii: "v")
        case .array, .dictionary: return UInt8(ascii: "a")
        case .structure: return UInt8(ascii: "r")
        }
    }

    /// Basic types may be dictionary keys; containers and variants may not.
    public var isBasic: Bool {
        switch self {
        case .variant, .array, .dictionary, .structure: return false
        default: return true
        }
    }

    /// The signature string of this single complete type.
    public var signature: String {
        switch self {
        case .array(let element): return "a" + element.signature
        case .dictionary(let key, let value): return "a{" + key.signature + value.signature + "}"
        case .structure(let fields): return "(" + fields.map(\.signature).joined() + ")"
        default: return String(UnicodeScalar(code))
        }
    }

    public var description: String { signature }

    /// Parses a signature holding exactly one complete type.
    public init(parsing signature: String) throws(DBusSignatureError) {
        let types = try DBusType.parseList(signature)
        guard types.count == 1, let only = types.first else {
            throw DBusSignatureError(signature: signature, reason: "expected exactly one complete type, found \(types.count)")
        }
        self = only
    }

    /// Parses a signature holding zero or more complete types (a message body's signature).
    public static func parseList(_ signature: String) throws(DBusSignatureError) -> [DBusType] {
        var parser = SignatureParser(signature: signature)
        return try parser.parseAll()
    }
}

/// A signature string that is not a valid D-Bus signature.
public struct DBusSignatureError: Error, Hashable, Sendable, CustomStringConvertible {
    public let signature: String
    public let reason: String
    public var description: String { "invalid D-Bus signature \"\(signature)\": \(reason)" }
}

extension Array where Element == DBusType {
    /// The concatenated signature of a list of types (a message body's signature).
    public var signature: String { map(\.signature).joined() }
}

/// A recursive-descent parser enforcing the specification's limits: at most 255 bytes,
/// 32 levels of array nesting and 32 of struct nesting, non-empty structs, basic dict keys.
private struct SignatureParser {
    let signature: String
    let bytes: [UInt8]
    var index = 0
    var arrayDepth = 0
    var structDepth = 0

    init(signature: String) {
        self.signature = signature
        self.bytes = Array(signature.utf8)
    }

    func fail(_ reason: String) -> DBusSignatureError {
        DBusSignatureError(signature: signature, reason: reason)
    }

    mutating func parseAll() throws(DBusSignatureError) -> [DBusType] {
        guard bytes.count <= 255 else { throw fail("longer than 255 bytes") }
        var types: [DBusType] = []
        while index < bytes.count {
            types.append(try parseOne())
        }
        return types
    }

    mutating func parseOne() throws(DBusSignatureError) -> DBusType {
        guard index < bytes.count else { throw fail("unexpected end") }
        let code = bytes[index]
        index += 1
        switch code {
        case UInt8(ascii: "y"): return .byte
        case UInt8(ascii: "b"): return .boolean
        case UInt8(ascii: "n"): return .int16
        case UInt8(ascii: "q"): return .uint16
        case UInt8(ascii: "i"): return .int32
        case UInt8(ascii: "u"): return .uint32
        case UInt8(ascii: "x"): return .int64
        case UInt8(ascii: "t"): return .uint64
        case UInt8(ascii: "d"): return .double
        case UInt8(ascii: "s"): return .string
        case UInt8(ascii: "o"): return .objectPath
        case UInt8(ascii: "g"): return .signature
        case UInt8(ascii: "h"): return .unixFD
        case UInt8(ascii: "v"): return .variant
        case UInt8(ascii: "a"):
            arrayDepth += 1
            defer { arrayDepth -= 1 }
            guard arrayDepth <= 32 else { throw fail("arrays nested deeper than 32") }
            if index < bytes.count, bytes[index] == UInt8(ascii: "{") {
                index += 1
                let key = try parseOne()
                guard key.isBasic else { throw fail("dictionary key \(key) is not a basic type") }
                let value = try parseOne()
                guard index < bytes.count, bytes[index] == UInt8(ascii: "}") else {
                    throw fail("dictionary entry must hold exactly a key and a value")
                }
                index += 1
                return .dictionary(key: key, value: value)
            }
            return .array(try parseOne())
        case UInt8(ascii: "("):
            structDepth += 1
            defer { structDepth -= 1 }
            guard structDepth <= 32 else { throw fail("structs nested deeper than 32") }
            var fields: [DBusType] = []
            while true {
                guard index < bytes.count else { throw fail("unterminated struct") }
                if bytes[index] == UInt8(ascii: ")") {
                    index += 1
                    break
                }
                fields.append(try parseOne())
            }
            guard !fields.isEmpty else { throw fail("empty struct") }
            return .structure(fields)
        default:
            throw fail("unexpected character at offset \(index - 1)")
        }
    }
}
