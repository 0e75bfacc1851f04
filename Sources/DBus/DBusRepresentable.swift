// Typed access to untrusted values: decoding checks the signature and throws a
// `DBusDecodingError` naming both signatures, so a peer sending the wrong type costs an error,
// never a crash.
//
// The decoding entry points are `@inlinable` so that callers in other modules get them
// specialized for their concrete types: unspecialized, every `[String: DBusValue]` or `[UInt8]`
// decode looked up generic metadata at run time (about 5,000 instructions of the ~80,000 it costs
// to receive and decode a PropertiesChanged signal; Benchmarks/dbus-bench under callgrind).

/// A value decoded from the bus did not have the expected type.
public struct DBusDecodingError: Error, Hashable, Sendable, CustomStringConvertible {
    /// The signature the caller expected.
    public let expected: String
    /// The signature that arrived (or "nothing" for a missing argument).
    public let actual: String
    /// Where in the message: "argument 1", "argument 0 → key 'RSSI'", …
    public let context: String

    public init(expected: String, actual: String, context: String = "") {
        self.expected = expected
        self.actual = actual
        self.context = context
    }

    public var description: String {
        let place = context.isEmpty ? "" : "\(context): "
        return "\(place)expected D-Bus type '\(expected)', got '\(actual)'"
    }

    @usableFromInline
    func adding(context outer: String) -> DBusDecodingError {
        DBusDecodingError(expected: expected, actual: actual, context: context.isEmpty ? outer : outer + " → " + context)
    }
}

/// A Swift type with a fixed D-Bus type, convertible both ways.
public protocol DBusRepresentable: Sendable {
    static var dbusType: DBusType { get }
    var dbusValue: DBusValue { get }
    init(dbusValue: DBusValue) throws(DBusDecodingError)
}

extension DBusRepresentable {
    @usableFromInline
    static func mismatch(_ value: DBusValue) -> DBusDecodingError {
        DBusDecodingError(expected: dbusType.signature, actual: value.type.signature)
    }
}

extension UInt8: DBusRepresentable {
    @inlinable
    public static var dbusType: DBusType { .byte }
    public var dbusValue: DBusValue { .byte(self) }
    @inlinable
    public init(dbusValue: DBusValue) throws(DBusDecodingError) {
        guard case .byte(let v) = dbusValue else { throw Self.mismatch(dbusValue) }
        self = v
    }
}

extension Bool: DBusRepresentable {
    @inlinable
    public static var dbusType: DBusType { .boolean }
    public var dbusValue: DBusValue { .boolean(self) }
    @inlinable
    public init(dbusValue: DBusValue) throws(DBusDecodingError) {
        guard case .boolean(let v) = dbusValue else { throw Self.mismatch(dbusValue) }
        self = v
    }
}

extension Int16: DBusRepresentable {
    @inlinable
    public static var dbusType: DBusType { .int16 }
    public var dbusValue: DBusValue { .int16(self) }
    @inlinable
    public init(dbusValue: DBusValue) throws(DBusDecodingError) {
        guard case .int16(let v) = dbusValue else { throw Self.mismatch(dbusValue) }
        self = v
    }
}

extension UInt16: DBusRepresentable {
    @inlinable
    public static var dbusType: DBusType { .uint16 }
    public var dbusValue: DBusValue { .uint16(self) }
    @inlinable
    public init(dbusValue: DBusValue) throws(DBusDecodingError) {
        guard case .uint16(let v) = dbusValue else { throw Self.mismatch(dbusValue) }
        self = v
    }
}

extension Int32: DBusRepresentable {
    @inlinable
    public static var dbusType: DBusType { .int32 }
    public var dbusValue: DBusValue { .int32(self) }
    @inlinable
    public init(dbusValue: DBusValue) throws(DBusDecodingError) {
        guard case .int32(let v) = dbusValue else { throw Self.mismatch(dbusValue) }
        self = v
    }
}

extension UInt32: DBusRepresentable {
    @inlinable
    public static var dbusType: DBusType { .uint32 }
    public var dbusValue: DBusValue { .uint32(self) }
    @inlinable
    public init(dbusValue: DBusValue) throws(DBusDecodingError) {
        guard case .uint32(let v) = dbusValue else { throw Self.mismatch(dbusValue) }
        self = v
    }
}

extension Int64: DBusRepresentable {
    @inlinable
    public static var dbusType: DBusType { .int64 }
    public var dbusValue: DBusValue { .int64(self) }
    @inlinable
    public init(dbusValue: DBusValue) throws(DBusDecodingError) {
        guard case .int64(let v) = dbusValue else { throw Self.mismatch(dbusValue) }
        self = v
    }
}

extension UInt64: DBusRepresentable {
    @inlinable
    public static var dbusType: DBusType { .uint64 }
    public var dbusValue: DBusValue { .uint64(self) }
    @inlinable
    public init(dbusValue: DBusValue) throws(DBusDecodingError) {
        guard case .uint64(let v) = dbusValue else { throw Self.mismatch(dbusValue) }
        self = v
    }
}

extension Double: DBusRepresentable {
    @inlinable
    public static var dbusType: DBusType { .double }
    public var dbusValue: DBusValue { .double(self) }
    @inlinable
    public init(dbusValue: DBusValue) throws(DBusDecodingError) {
        guard case .double(let v) = dbusValue else { throw Self.mismatch(dbusValue) }
        self = v
    }
}

extension String: DBusRepresentable {
    @inlinable
    public static var dbusType: DBusType { .string }
    public var dbusValue: DBusValue { .string(self) }
    @inlinable
    public init(dbusValue: DBusValue) throws(DBusDecodingError) {
        guard case .string(let v) = dbusValue else { throw Self.mismatch(dbusValue) }
        self = v
    }
}

extension DBusObjectPath: DBusRepresentable {
    @inlinable
    public static var dbusType: DBusType { .objectPath }
    public var dbusValue: DBusValue { .objectPath(self) }
    @inlinable
    public init(dbusValue: DBusValue) throws(DBusDecodingError) {
        guard case .objectPath(let v) = dbusValue else { throw Self.mismatch(dbusValue) }
        self = v
    }
}

/// `DBusValue` itself stands for a variant: `[String: DBusValue]` is `a{sv}`, and decoding it
/// yields the values inside the variants.
extension DBusValue: DBusRepresentable {
    @inlinable
    public static var dbusType: DBusType { .variant }
    public var dbusValue: DBusValue { .variant(self) }
    @inlinable
    public init(dbusValue: DBusValue) throws(DBusDecodingError) {
        guard case .variant(let inner) = dbusValue else { throw Self.mismatch(dbusValue) }
        self = inner
    }
}

extension Array: DBusRepresentable where Element: DBusRepresentable {
    @inlinable
    public static var dbusType: DBusType { .array(Element.dbusType) }
    public var dbusValue: DBusValue { .array(element: Element.dbusType, map(\.dbusValue)) }
    @inlinable
    public init(dbusValue: DBusValue) throws(DBusDecodingError) {
        guard case .array(let elementType, let items) = dbusValue, elementType == Element.dbusType else {
            throw Self.mismatch(dbusValue)
        }
        if Element.self == UInt8.self {
            // Byte arrays (characteristic values) are most of what a BlueZ client decodes: a
            // plain loop instead of a throwing conversion per byte costs a sixth as much.
            var bytes: [UInt8] = []
            bytes.reserveCapacity(items.count)
            for (index, item) in items.enumerated() {
                guard case .byte(let byte) = item else { throw UInt8.mismatch(item).adding(context: "element \(index)") }
                bytes.append(byte)
            }
            self = bytes as! [Element]
            return
        }
        var result: [Element] = []
        result.reserveCapacity(items.count)
        for (index, item) in items.enumerated() {
            do {
                result.append(try Element(dbusValue: item))
            } catch {
                throw error.adding(context: "element \(index)")
            }
        }
        self = result
    }
}

extension Dictionary: DBusRepresentable where Key: DBusRepresentable, Value: DBusRepresentable {
    @inlinable
    public static var dbusType: DBusType { .dictionary(key: Key.dbusType, value: Value.dbusType) }
    public var dbusValue: DBusValue {
        let entries = map { DBusDictEntry(key: $0.key.dbusValue, value: $0.value.dbusValue) }
        return .dictionary(key: Key.dbusType, value: Value.dbusType, entries)
    }
    /// Duplicate keys (legal on the wire) keep the last value, as most D-Bus bindings do.
    @inlinable
    public init(dbusValue: DBusValue) throws(DBusDecodingError) {
        guard case .dictionary(let keyType, let valueType, let entries) = dbusValue,
            keyType == Key.dbusType, valueType == Value.dbusType
        else { throw Self.mismatch(dbusValue) }
        var result: [Key: Value] = [:]
        result.reserveCapacity(entries.count)
        for entry in entries {
            let key = try Key(dbusValue: entry.key)
            do {
                result[key] = try Value(dbusValue: entry.value)
            } catch {
                throw error.adding(context: "key \(entry.key)")
            }
        }
        self = result
    }
}

extension Array where Element == DBusValue {
    /// Decodes argument `index` of a message body as `T`.
    @inlinable
    public func decode<T: DBusRepresentable>(_ type: T.Type, at index: Int) throws(DBusDecodingError) -> T {
        guard indices.contains(index) else {
            throw DBusDecodingError(expected: T.dbusType.signature, actual: "nothing", context: "argument \(index)")
        }
        do {
            return try T(dbusValue: self[index])
        } catch {
            throw error.adding(context: "argument \(index)")
        }
    }

    /// Reads argument `index` as a file descriptor. The returned object is the one in the body:
    /// `take()` it to own the descriptor, or let it close when released.
    public func fileDescriptor(at index: Int) throws(DBusDecodingError) -> DBusFileDescriptor {
        guard indices.contains(index) else {
            throw DBusDecodingError(expected: "h", actual: "nothing", context: "argument \(index)")
        }
        guard case .unixFD(let fd) = self[index] else {
            throw DBusDecodingError(expected: "h", actual: self[index].type.signature, context: "argument \(index)")
        }
        return fd
    }

    /// Checks that the body's signature is exactly `signature` (e.g. before decoding a reply).
    public func expectSignature(_ signature: String) throws(DBusDecodingError) {
        let actual = map(\.type.signature).joined()
        guard actual == signature else {
            throw DBusDecodingError(expected: signature, actual: actual, context: "message body")
        }
    }
}

extension Dictionary where Key == String, Value == DBusValue {
    /// Reads an optional entry of a property map as `T`; nil when absent, an error when mistyped.
    @inlinable
    public func decodeIfPresent<T: DBusRepresentable>(_ type: T.Type, forKey key: String) throws(DBusDecodingError) -> T? {
        guard let value = self[key] else { return nil }
        do {
            return try T(dbusValue: value)
        } catch {
            throw error.adding(context: "'\(key)'")
        }
    }
}
