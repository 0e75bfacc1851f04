
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
        if CStringComparison.equal(pointer, previous) { return previous }
        let fresh = String(cString: pointer)
        strings[slot] = fresh
        return fresh
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
