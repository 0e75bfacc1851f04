
/// Per-connection memory of what recent messages looked like, so decoding a stream of similar
/// messages (a device's notifications all share path, interface, member and signature) does not
/// allocate the same strings and parse the same signatures again for each one.
///
/// Each lookup compares the C bytes with the remembered value first, so the result is always
/// exactly what the message holds. Confined to the connection's thread, like the codec.
struct DecodeCache {
    private var strings: [String] = Array(repeating: "", count: Field.allCases.count)
    private var signatures: [String: [DBusType]] = [:]

    /// Header fields that repeat from message to message.
    enum Field: Int, CaseIterable {
        case sender, path, interface, member, bodyString
    }

    /// The Swift string for `pointer`, reusing the previous one of the same field when equal.
    mutating func string(_ pointer: UnsafePointer<CChar>, field: Field) -> String {
        let slot = field.rawValue
        let previous = strings[slot]
        if Self.equal(previous, pointer) { return previous }
        let fresh = String(cString: pointer)
        strings[slot] = fresh
        return fresh
    }

    /// True when the NUL-terminated `c` holds exactly the bytes of `swift`. Compared here rather
    /// than with `strcmp`, so this file needs no Glibc import: with one, a clean debug build failed
    /// once on Glibc's and the CDBus shim's differing `fd_set`.
    private static func equal(_ swift: String, _ c: UnsafePointer<CChar>) -> Bool {
        var swift = swift
        return swift.withUTF8 { bytes in
            // Stops at the C string's end: a NUL never equals a byte of a C-derived string.
            for index in bytes.indices {
                let byte = UInt8(bitPattern: c[index])
                if byte == 0 || byte != bytes[index] { return false }
            }
            return c[bytes.count] == 0
        }
    }

    /// The parsed types of a body signature. Bounded: a peer sending endless distinct
    /// signatures only costs re-parsing.
    mutating func types(of signature: String) throws(DBusSignatureError) -> [DBusType] {
        if let known = signatures[signature] { return known }
        let parsed = try DBusType.parseList(signature)
        if signatures.count >= 64 { signatures.removeAll(keepingCapacity: true) }
        signatures[signature] = parsed
        return parsed
    }
}
