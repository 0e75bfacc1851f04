// Our own TOML reader, because configuration errors must point at `file:line` and no TOML package
// available to the project keeps positions. It covers TOML v1.0 except dates and times.
// It works on UTF-8 bytes with bounds-checked access only, and limits nesting depth, so that no
// input (however malformed) can trap or exhaust the stack: a bad config must never crash a reload.

/// Parses TOML text into a `TOMLTable` whose every key and value carries its position.
///
/// Supported: comments; bare, quoted and dotted keys; `[tables]` and `[[arrays of tables]]`;
/// basic and literal strings, single- and multi-line, with all TOML escapes; decimal, hex, octal
/// and binary integers with underscores; floats including `inf` and `nan`; booleans; arrays
/// (multi-line, trailing comma); inline tables. Redefining a key or a table is an error.
/// Not supported: offset/local dates and times (reported as an error).
public struct TOMLParser {
    /// Arrays and inline tables nested deeper than this are rejected, which bounds recursion.
    public static let maximumNesting = 64

    let bytes: [UInt8]
    let file: String
    var index = 0
    var line = 1
    /// Kept up to date by `advance()` so that taking a position costs nothing, even on a very
    /// long line.
    var column = 1
    var depth = 0

    init(text: String, file: String) {
        var bytes = Array(text.utf8)
        // A byte order mark is not TOML, but some editors write one; it is not worth an error.
        if bytes.starts(with: [0xEF, 0xBB, 0xBF]) { bytes.removeFirst(3) }
        self.bytes = bytes
        self.file = file
    }

    /// Parses `text`; `file` is only used to label positions and errors.
    public static func parse(_ text: String, file: String) throws(TOMLSyntaxError) -> TOMLTable {
        var parser = TOMLParser(text: text, file: file)
        return try parser.parseDocument()
    }

    // MARK: - Document structure

    mutating func parseDocument() throws(TOMLSyntaxError) -> TOMLTable {
        let root = TOMLTableBuilder(origin: .root, position: position, path: [])
        var current = root
        while true {
            skipSpaces()
            guard let byte = peek() else { break }
            switch byte {
            case UInt8(ascii: "#"), UInt8(ascii: "\n"), UInt8(ascii: "\r"):
                try expectLineEnd(after: "")
            case UInt8(ascii: "["):
                if peek(1) == UInt8(ascii: "[") {
                    current = try parseArrayTableHeader(root: root)
                } else {
                    current = try parseTableHeader(root: root)
                }
                try expectLineEnd(after: "a table header")
            default:
                try parseKeyValue(into: current)
                try expectLineEnd(after: "a value")
            }
        }
        return root.freeze()
    }

    /// `[a.b]`: intermediate tables are created implicitly; the last one must not exist yet,
    /// except as an implicit intermediate of an earlier, deeper header.
    mutating func parseTableHeader(root: TOMLTableBuilder) throws(TOMLSyntaxError) -> TOMLTableBuilder {
        let headerPosition = position
        advance()
        skipSpaces()
        let keys = try parseKey()
        try expect(UInt8(ascii: "]"), "expected ']' at the end of the table header")
        let (parent, last) = try descend(root: root, through: keys)
        let name = displayPath(keys.map(\.name))
        if let slot = parent[last.name] {
            switch slot.content {
            case .table(let table) where table.origin == .implicit:
                table.origin = .header
                table.position = headerPosition
                return table
            case .table(let table) where table.origin == .dotted:
                throw error("table [\(name)] was already defined with dotted keys at line \(table.position.line)", at: headerPosition)
            case .table(let table):
                throw error("table [\(name)] is defined twice (first at line \(table.position.line))", at: headerPosition)
            case .tableArray:
                throw error("[\(name)] is already an array of tables (line \(slot.keyPosition.line)); it cannot also be a table", at: headerPosition)
            case .value:
                throw error("'\(name)' is already a value (line \(slot.keyPosition.line)); it cannot also be a table", at: headerPosition)
            }
        }
        let table = TOMLTableBuilder(origin: .header, position: headerPosition, path: parent.path + [last.name])
        parent.set(last.name, .init(keyPosition: last.position, content: .table(table)))
        return table
    }

    /// `[[a.b]]`: appends a new table to the array at `a.b`, creating it on first use.
    mutating func parseArrayTableHeader(root: TOMLTableBuilder) throws(TOMLSyntaxError) -> TOMLTableBuilder {
        let headerPosition = position
        advance()
        advance()
        skipSpaces()
        let keys = try parseKey()
        guard peek() == UInt8(ascii: "]"), peek(1) == UInt8(ascii: "]") else {
            throw error("expected ']]' at the end of the array-of-tables header")
        }
        advance()
        advance()
        let (parent, last) = try descend(root: root, through: keys)
        let name = displayPath(keys.map(\.name))
        let table = TOMLTableBuilder(origin: .header, position: headerPosition, path: parent.path + [last.name])
        if let slot = parent[last.name] {
            guard case .tableArray(let array) = slot.content else {
                throw error("[[\(name)]] cannot append to '\(name)', already defined at line \(slot.keyPosition.line) as something else than an array of tables", at: headerPosition)
            }
            array.tables.append(table)
        } else {
            parent.set(last.name, .init(keyPosition: last.position, content: .tableArray(TOMLTableArrayBuilder(first: table))))
        }
        return table
    }

    /// Walks a header's key path down to the parent of its last key, creating implicit tables and
    /// entering the last element of arrays of tables, as TOML specifies.
    mutating func descend(
        root: TOMLTableBuilder, through keys: [TOMLKeyPart]
    ) throws(TOMLSyntaxError) -> (TOMLTableBuilder, TOMLKeyPart) {
        var table = root
        for part in keys.dropLast() {
            if let slot = table[part.name] {
                switch slot.content {
                case .table(let next):
                    table = next
                case .tableArray(let array):
                    guard let last = array.tables.last else { throw error("internal: empty array of tables", at: part.position) }
                    table = last
                case .value(let node):
                    let what = if case .table = node.value { "an inline table, which cannot be extended" } else { node.value.typeDescription }
                    throw error("'\(displayPath(table.path + [part.name]))' is \(what) (line \(slot.keyPosition.line))", at: part.position)
                }
            } else {
                let next = TOMLTableBuilder(origin: .implicit, position: part.position, path: table.path + [part.name])
                table.set(part.name, .init(keyPosition: part.position, content: .table(next)))
                table = next
            }
        }
        guard let last = keys.last else { throw error("expected a key", at: position) }
        return (table, last)
    }

    /// `key = value`, where `key` may be dotted; dotted keys create (or add to) dotted tables.
    mutating func parseKeyValue(into table: TOMLTableBuilder) throws(TOMLSyntaxError) {
        let keys = try parseKey()
        let name = displayPath(keys.map(\.name))
        try expect(UInt8(ascii: "="), "expected '=' after the key '\(name)'")
        skipSpaces()
        let node = try parseValue()
        try insert(node, at: keys, into: table)
    }

    mutating func insert(_ node: TOMLNode, at keys: [TOMLKeyPart], into root: TOMLTableBuilder) throws(TOMLSyntaxError) {
        var table = root
        for part in keys.dropLast() {
            if let slot = table[part.name] {
                guard case .table(let next) = slot.content, next.origin == .dotted else {
                    throw error("'\(displayPath(table.path + [part.name]))' is already defined at line \(slot.keyPosition.line) and cannot be extended with a dotted key", at: part.position)
                }
                table = next
            } else {
                let next = TOMLTableBuilder(origin: .dotted, position: part.position, path: table.path + [part.name])
                table.set(part.name, .init(keyPosition: part.position, content: .table(next)))
                table = next
            }
        }
        guard let last = keys.last else { throw error("expected a key", at: node.position) }
        if let slot = table[last.name] {
            throw error("key '\(displayPath(table.path + [last.name]))' is defined twice (first at line \(slot.keyPosition.line))", at: last.position)
        }
        table.set(last.name, .init(keyPosition: last.position, content: .value(node)))
    }

    // MARK: - Keys

    /// One or more key parts separated by dots; stops after trailing spaces.
    mutating func parseKey() throws(TOMLSyntaxError) -> [TOMLKeyPart] {
        var parts: [TOMLKeyPart] = []
        while true {
            skipSpaces()
            let start = position
            guard let byte = peek() else { throw error("expected a key, found the end of the file") }
            let name: String
            switch byte {
            case UInt8(ascii: "\""):
                name = try parseBasicString()
            case UInt8(ascii: "'"):
                name = try parseLiteralString()
            default:
                guard Self.isBareKeyByte(byte) else {
                    throw error("expected a key, found \(describe(byte))")
                }
                let from = index
                while let next = peek(), Self.isBareKeyByte(next) { advance() }
                name = String(decoding: bytes[from..<index], as: UTF8.self)
            }
            parts.append(TOMLKeyPart(name: name, position: start))
            skipSpaces()
            guard peek() == UInt8(ascii: ".") else { return parts }
            advance()
        }
    }

    static func isBareKeyByte(_ byte: UInt8) -> Bool {
        switch byte {
        case UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "a")...UInt8(ascii: "z"),
             UInt8(ascii: "0")...UInt8(ascii: "9"), UInt8(ascii: "_"), UInt8(ascii: "-"):
            true
        default:
            false
        }
    }

    // MARK: - Scanning

    var position: TOMLPosition {
        TOMLPosition(file: file, line: line, column: column)
    }

    func peek(_ offset: Int = 0) -> UInt8? {
        let at = index + offset
        return at >= 0 && at < bytes.count ? bytes[at] : nil
    }

    mutating func advance() {
        guard index < bytes.count else { return }
        let byte = bytes[index]
        if byte == UInt8(ascii: "\n") {
            line += 1
            column = 1
        } else if byte & 0xC0 != 0x80 {
            // Columns count Unicode scalars: every byte that is not a UTF-8 continuation byte.
            column += 1
        }
        index += 1
    }

    mutating func skipSpaces() {
        while let byte = peek(), byte == UInt8(ascii: " ") || byte == UInt8(ascii: "\t") { advance() }
    }

    /// Spaces, comments and newlines, as allowed between array elements.
    mutating func skipSpacesCommentsAndNewlines() throws(TOMLSyntaxError) {
        while true {
            skipSpaces()
            switch peek() {
            case UInt8(ascii: "#"):
                try skipComment()
            case UInt8(ascii: "\n"):
                advance()
            case UInt8(ascii: "\r") where peek(1) == UInt8(ascii: "\n"):
                advance()
                advance()
            default:
                return
            }
        }
    }

    mutating func skipComment() throws(TOMLSyntaxError) {
        advance()
        while let byte = peek(), byte != UInt8(ascii: "\n") {
            if byte == UInt8(ascii: "\r"), peek(1) == UInt8(ascii: "\n") { return }
            if Self.isForbiddenControl(byte) { throw error("\(describe(byte)) in a comment") }
            advance()
        }
    }

    /// After a header or a key/value pair only spaces and a comment may follow on the line.
    mutating func expectLineEnd(after what: String) throws(TOMLSyntaxError) {
        skipSpaces()
        if peek() == UInt8(ascii: "#") { try skipComment() }
        switch peek() {
        case nil:
            return
        case UInt8(ascii: "\n"):
            advance()
        case UInt8(ascii: "\r") where peek(1) == UInt8(ascii: "\n"):
            advance()
            advance()
        case let byte?:
            let context = what.isEmpty ? "" : " after \(what)"
            throw error("expected a new line\(context), found \(describe(byte))")
        }
    }

    mutating func expect(_ byte: UInt8, _ message: String) throws(TOMLSyntaxError) {
        skipSpaces()
        guard peek() == byte else {
            let found = peek().map { describe($0) } ?? "the end of the file"
            throw error("\(message), found \(found)")
        }
        advance()
    }

    /// Tab is the only control character TOML allows in comments and strings.
    static func isForbiddenControl(_ byte: UInt8) -> Bool {
        (byte < 0x20 && byte != UInt8(ascii: "\t")) || byte == 0x7F
    }

    func error(_ message: String, at position: TOMLPosition? = nil) -> TOMLSyntaxError {
        TOMLSyntaxError(position: position ?? self.position, message: message)
    }

    /// A byte as shown in messages: the character when printable, else its code.
    func describe(_ byte: UInt8) -> String {
        switch byte {
        case UInt8(ascii: "\n"): "the end of the line"
        case 0x21...0x7E: "'\(Character(Unicode.Scalar(byte)))'"
        case UInt8(ascii: " "): "a space"
        case 0x80...: "'\(currentCharacter)'"
        default: "control character U+\(String(byte, radix: 16, uppercase: true).leftPadded(to: 4))"
        }
    }

    /// The (possibly multi-byte) character starting at `index`.
    var currentCharacter: String {
        var end = index + 1
        while end < bytes.count, bytes[end] & 0xC0 == 0x80 { end += 1 }
        return String(decoding: bytes[min(index, bytes.count)..<min(end, bytes.count)], as: UTF8.self)
    }

    func displayPath(_ names: [String]) -> String {
        names.map(Self.displayKey).joined(separator: ".")
    }

    /// A key as it would be written: bare when it can be, quoted otherwise.
    package static func displayKey(_ name: String) -> String {
        name.utf8.allSatisfy(isBareKeyByte) && !name.isEmpty ? name : "\"\(name)\""
    }
}

/// One part of a (possibly dotted) key and where it was written.
struct TOMLKeyPart {
    var name: String
    var position: TOMLPosition
}
