/// The journald native protocol, as documented in systemd's "Native Journal Protocol": one
/// datagram per entry; each field is `NAME=value\n`, or, when the value contains a newline,
/// `NAME\n` + the value's length as a little-endian UInt64 + the value + `\n`.
///
/// Production sends through `sd_journal_sendv` (which produces this encoding and falls back to a
/// memfd for entries larger than a datagram); this encoder exists so that the same entries can be
/// sent to a socket of one's own, which is how the tests observe what a journald would receive.
public enum JournalWireFormat {
    public static func encode(_ fields: [JournalField]) -> [UInt8] {
        var out: [UInt8] = []
        for field in fields {
            out.append(contentsOf: field.name.utf8)
            if field.value.contains(UInt8(ascii: "\n")) {
                out.append(UInt8(ascii: "\n"))
                var length = UInt64(field.value.count).littleEndian
                withUnsafeBytes(of: &length) { out.append(contentsOf: $0) }
                out.append(contentsOf: field.value)
            } else {
                out.append(UInt8(ascii: "="))
                out.append(contentsOf: field.value)
            }
            out.append(UInt8(ascii: "\n"))
        }
        return out
    }

    /// Parses a datagram back into fields, or nil if it is malformed. The inverse of `encode`.
    public static func decode(_ bytes: [UInt8]) -> [JournalField]? {
        var fields: [JournalField] = []
        var index = 0
        while index < bytes.count {
            guard let end = bytes[index...].firstIndex(where: { $0 == UInt8(ascii: "\n") || $0 == UInt8(ascii: "=") })
            else { return nil }
            let name = String(decoding: bytes[index..<end], as: UTF8.self)
            if bytes[end] == UInt8(ascii: "=") {
                guard let newline = bytes[end...].firstIndex(of: UInt8(ascii: "\n")),
                      let field = JournalField(name: name, value: Array(bytes[(end + 1)..<newline]))
                else { return nil }
                fields.append(field)
                index = newline + 1
            } else {
                let lengthStart = end + 1
                guard bytes.count >= lengthStart + 8 else { return nil }
                var length: UInt64 = 0
                for (shift, byte) in bytes[lengthStart..<(lengthStart + 8)].enumerated() {
                    length |= UInt64(byte) << (8 * UInt64(shift))
                }
                let valueStart = lengthStart + 8
                guard length <= UInt64(bytes.count - valueStart) else { return nil }
                let valueEnd = valueStart + Int(length)
                guard valueEnd < bytes.count, bytes[valueEnd] == UInt8(ascii: "\n"),
                      let field = JournalField(name: name, value: Array(bytes[valueStart..<valueEnd]))
                else { return nil }
                fields.append(field)
                index = valueEnd + 1
            }
        }
        return fields
    }
}
