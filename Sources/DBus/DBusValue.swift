// Every value that can travel in a D-Bus message, with its type attached, so that empty arrays
// and dictionaries still know their element signature and a body can always be re-marshalled.

/// A D-Bus value of any type.
///
/// Values decoded from the bus are untrusted: read them through `DBusRepresentable`
/// (`try args.decode(String.self, at: 0)`), which throws `DBusDecodingError` naming the expected
/// and the actual signature instead of trapping.
public enum DBusValue: Hashable, Sendable {
    case byte(UInt8)
    case boolean(Bool)
    case int16(Int16)
    case uint16(UInt16)
    case int32(Int32)
    case uint32(UInt32)
    case int64(Int64)
    case uint64(UInt64)
    case double(Double)
    case string(String)
    case objectPath(DBusObjectPath)
    case signature(String)
    case unixFD(DBusFileDescriptor)
    // Only variants recurse directly; arrays and structs hold their children in Array storage,
    // so scalars and byte arrays are not boxed one by one.
    indirect case variant(DBusValue)
    /// An array with its element type (needed when the array is empty).
    case array(element: DBusType, [DBusValue])
    /// A dictionary (`a{kv}`) as ordered entries: D-Bus preserves entry order on the wire.
    case dictionary(key: DBusType, value: DBusType, [DBusDictEntry])
    case structure([DBusValue])

    /// The complete type of this value.
    public var type: DBusType {
        switch self {
        case .byte: return .byte
        case .boolean: return .boolean
        case .int16: return .int16
        case .uint16: return .uint16
        case .int32: return .int32
        case .uint32: return .uint32
        case .int64: return .int64
        case .uint64: return .uint64
        case .double: return .double
        case .string: return .string
        case .objectPath: return .objectPath
        case .signature: return .signature
        case .unixFD: return .unixFD
        case .variant: return .variant
        case .array(let element, _): return .array(element)
        case .dictionary(let key, let value, _): return .dictionary(key: key, value: value)
        case .structure(let fields): return .structure(fields.map(\.type))
        }
    }

    /// The value inside a variant, or the value itself when it is not a variant.
    public var unwrappingVariant: DBusValue {
        if case .variant(let inner) = self { return inner.unwrappingVariant }
        return self
    }
}

/// One key/value pair of a D-Bus dictionary.
public struct DBusDictEntry: Hashable, Sendable {
    public var key: DBusValue
    public var value: DBusValue

    public init(key: DBusValue, value: DBusValue) {
        self.key = key
        self.value = value
    }
}

extension DBusValue {
    /// An `a{sv}` dictionary, the shape of BlueZ's property maps and option dictionaries.
    /// Entries are sorted by key so the same map always marshals to the same bytes.
    public static func stringVariantMap(_ map: [String: DBusValue]) -> DBusValue {
        let entries = map.sorted { $0.key < $1.key }.map {
            DBusDictEntry(key: .string($0.key), value: .variant($0.value))
        }
        return .dictionary(key: .string, value: .variant, entries)
    }

    /// An `as` array.
    public static func stringArray(_ strings: [String]) -> DBusValue {
        .array(element: .string, strings.map(DBusValue.string))
    }

    /// An `ay` array.
    public static func bytes(_ bytes: [UInt8]) -> DBusValue {
        .array(element: .byte, bytes.map(DBusValue.byte))
    }
}

extension DBusValue: CustomStringConvertible {
    /// A compact, gdbus-like rendering for logs and test failures.
    public var description: String {
        switch self {
        case .byte(let v): return "byte \(v)"
        case .boolean(let v): return v ? "true" : "false"
        case .int16(let v): return "int16 \(v)"
        case .uint16(let v): return "uint16 \(v)"
        case .int32(let v): return "\(v)"
        case .uint32(let v): return "uint32 \(v)"
        case .int64(let v): return "int64 \(v)"
        case .uint64(let v): return "uint64 \(v)"
        case .double(let v): return "\(v)"
        case .string(let v): return "'\(v)'"
        case .objectPath(let v): return "objectpath '\(v)'"
        case .signature(let v): return "signature '\(v)'"
        case .unixFD(let fd): return "handle \(fd)"
        case .variant(let v): return "<\(v)>"
        case .array(_, let items): return "[" + items.map(\.description).joined(separator: ", ") + "]"
        case .dictionary(_, _, let entries):
            return "{" + entries.map { "\($0.key): \($0.value)" }.joined(separator: ", ") + "}"
        case .structure(let fields): return "(" + fields.map(\.description).joined(separator: ", ") + ")"
        }
    }
}
