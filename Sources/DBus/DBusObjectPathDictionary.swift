import CDBus
import Glibc

/// A dictionary keyed by object path in which a received message's own path can be looked up in
/// place (`value(forPathOf:)`): libdbus's bytes are hashed and compared where they are, so a
/// claim that attributes each signal to an object (`DBusMessageReader`) makes no Swift string
/// per signal.
public struct DBusObjectPathDictionary<Value> {
    // Internal rather than private so that the inlinable lookup specializes in the caller's
    // module for its `Value` (unspecialized, the dictionary lookup alone cost ~800 instructions).
    @usableFromInline var storage: [ObjectPathKey: Value] = [:]

    public init() {}

    public var count: Int { storage.count }
    public var isEmpty: Bool { storage.isEmpty }

    public subscript(path: DBusObjectPath) -> Value? {
        get { storage[ObjectPathKey(path)] }
        set { storage[ObjectPathKey(path)] = newValue }
    }

    /// The value for the path of `message`; nil when it has none or the path is not a key.
    @inlinable
    public func value(forPathOf message: borrowing DBusMessageReader) -> Value? {
        // The probe points into the message, which outlives this lookup; the dictionary keeps
        // only the keys stored through the subscript.
        guard let probe = ObjectPathKey(pathOf: message) else { return nil }
        return storage[probe]
    }

    public mutating func removeAll() {
        storage.removeAll()
    }
}

extension DBusObjectPathDictionary: Sendable where Value: Sendable {}

/// A key of `DBusObjectPathDictionary`: a stored path, or, for the length of one lookup, the
/// bytes of a message's path. Both hash the same bytes the same way.
///
/// `@unchecked Sendable`: only stored keys (a `String`) are ever kept; a probe exists only on
/// the stack of the lookup that made it.
@usableFromInline
struct ObjectPathKey: Hashable, @unchecked Sendable {
    private enum Bytes {
        case stored(String)
        case probe(UnsafeRawPointer, Int)
    }

    private let bytes: Bytes
    private let digest: UInt64

    init(_ path: DBusObjectPath) {
        var text = path.rawValue
        digest = text.withUTF8 { Self.digest(UnsafeRawBufferPointer($0)) }
        bytes = .stored(path.rawValue)
    }

    /// A probe for the path of `message`, valid while the message is; nil when it has none.
    @usableFromInline
    init?(pathOf message: borrowing DBusMessageReader) {
        guard let path = dbus_message_get_path(message.raw) else { return nil }
        let length = strlen(path)
        digest = Self.digest(UnsafeRawBufferPointer(start: path, count: length))
        bytes = .probe(UnsafeRawPointer(path), length)
    }

    @usableFromInline
    func hash(into hasher: inout Hasher) {
        hasher.combine(digest)
    }

    @usableFromInline
    static func == (lhs: ObjectPathKey, rhs: ObjectPathKey) -> Bool {
        guard lhs.digest == rhs.digest else { return false }
        // One side at a time: switching over the pair copies both keys into a tuple, which
        // retains and releases a stored key's string on every lookup.
        switch lhs.bytes {
        case .stored(let left):
            switch rhs.bytes {
            case .stored(let right): return left == right
            case .probe(let start, let length): return CStringComparison.equal(start, length: length, left)
            }
        case .probe(let left, let leftLength):
            switch rhs.bytes {
            case .stored(let right): return CStringComparison.equal(left, length: leftLength, right)
            case .probe(let right, let rightLength): return leftLength == rightLength && memcmp(left, right, leftLength) == 0
            }
        }
    }

    /// A quick digest of the bytes, eight at a time (the dictionary's own hasher mixes it
    /// further, so it needs only to differ where paths do).
    private static func digest(_ bytes: UnsafeRawBufferPointer) -> UInt64 {
        var digest: UInt64 = 0xCBF2_9CE4_8422_2325 ^ UInt64(bytes.count)
        var offset = 0
        while offset + 8 <= bytes.count {
            digest = (digest ^ bytes.loadUnaligned(fromByteOffset: offset, as: UInt64.self)) &* 0x0000_0100_0000_01B3
            digest ^= digest >> 29
            offset += 8
        }
        while offset < bytes.count {
            digest = (digest ^ UInt64(bytes[offset])) &* 0x0000_0100_0000_01B3
            offset += 1
        }
        return digest
    }
}
