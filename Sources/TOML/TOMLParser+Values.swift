// Values: strings, numbers, booleans, arrays and inline tables. Every path that consumes input
// either advances or throws, so parsing always terminates.

extension TOMLParser {
    mutating func parseValue() throws(TOMLSyntaxError) -> TOMLNode {
        let start = position
        guard let byte = peek() else { throw error("expected a value, found the end of the file") }
        let value: TOMLValue
        switch byte {
        case UInt8(ascii: "\""):
            value = .string(peek(1) == byte && peek(2) == byte ? try parseMultilineBasicString() : try parseBasicString())
        case UInt8(ascii: "'"):
            value = .string(peek(1) == byte && peek(2) == byte ? try parseMultilineLiteralString() : try parseLiteralString())
        case UInt8(ascii: "["):
            value = try nested { (parser: inout TOMLParser) throws(TOMLSyntaxError) in try parser.parseArray() }
        case UInt8(ascii: "{"):
            value = try nested { (parser: inout TOMLParser) throws(TOMLSyntaxError) in try parser.parseInlineTable() }
        case UInt8(ascii: "t"), UInt8(ascii: "f"):
            value = try parseBoolean()
        case UInt8(ascii: "+"), UInt8(ascii: "-"), UInt8(ascii: "0")...UInt8(ascii: "9"),
             UInt8(ascii: "i"), UInt8(ascii: "n"):
            value = try parseNumber()
        default:
            throw error("expected a value, found \(describe(byte))")
        }
        return TOMLNode(value: value, position: start)
    }

    /// Runs `body` one nesting level deeper, refusing to go past `maximumNesting`.
    mutating func nested(_ body: (inout TOMLParser) throws(TOMLSyntaxError) -> TOMLValue) throws(TOMLSyntaxError) -> TOMLValue {
        guard depth < Self.maximumNesting else {
            throw error("arrays and inline tables are nested more than \(Self.maximumNesting) levels deep")
        }
        depth += 1
        defer { depth -= 1 }
        return try body(&self)
    }

    // MARK: - Arrays and inline tables

    mutating func parseArray() throws(TOMLSyntaxError) -> TOMLValue {
        advance()
        var elements: [TOMLNode] = []
        while true {
            try skipSpacesCommentsAndNewlines()
            if peek() == UInt8(ascii: "]") {
                advance()
                return .array(elements)
            }
            elements.append(try parseValue())
            try skipSpacesCommentsAndNewlines()
            switch peek() {
            case UInt8(ascii: ","):
                advance()
            case UInt8(ascii: "]"):
                advance()
                return .array(elements)
            case nil:
                throw error("unterminated array: expected ',' or ']', found the end of the file")
            case let byte?:
                throw error("expected ',' or ']' in an array, found \(describe(byte))")
            }
        }
    }

    /// `{ a = 1, b.c = 2 }`: on one line, no trailing comma (TOML v1.0).
    mutating func parseInlineTable() throws(TOMLSyntaxError) -> TOMLValue {
        let table = TOMLTableBuilder(origin: .inline, position: position, path: [])
        advance()
        skipSpaces()
        if peek() == UInt8(ascii: "}") {
            advance()
            return .table(table.freeze())
        }
        while true {
            skipSpaces()
            if peek() == UInt8(ascii: "\n") || peek() == UInt8(ascii: "\r") {
                throw error("an inline table must be written on one line")
            }
            if peek() == UInt8(ascii: "}") {
                throw error("trailing comma in an inline table")
            }
            try parseKeyValue(into: table)
            skipSpaces()
            switch peek() {
            case UInt8(ascii: ","):
                advance()
            case UInt8(ascii: "}"):
                advance()
                return .table(table.freeze())
            case nil:
                throw error("unterminated inline table: expected ',' or '}', found the end of the file")
            case let byte?:
                throw error("expected ',' or '}' in an inline table, found \(describe(byte))")
            }
        }
    }

    // MARK: - Booleans

    mutating func parseBoolean() throws(TOMLSyntaxError) -> TOMLValue {
        if matches("true") {
            skip(4)
            return .boolean(true)
        }
        if matches("false") {
            skip(5)
            return .boolean(false)
        }
        throw error("expected a value, found '\(word())' (strings must be quoted)")
    }

    /// The bytes at `index` spell `text` and are not followed by more of a bare word.
    func matches(_ text: String) -> Bool {
        let utf8 = Array(text.utf8)
        for (offset, byte) in utf8.enumerated() where peek(offset) != byte { return false }
        guard let next = peek(utf8.count) else { return true }
        return !Self.isBareKeyByte(next)
    }

    mutating func skip(_ count: Int) {
        for _ in 0..<count { advance() }
    }

    /// The bare word at `index`, for messages.
    func word() -> String {
        var end = index
        while end < bytes.count, end - index < 40, Self.isBareKeyByte(bytes[end]) || bytes[end] == UInt8(ascii: ".") { end += 1 }
        return String(decoding: bytes[min(index, bytes.count)..<end], as: UTF8.self)
    }

    // MARK: - Strings

    mutating func parseBasicString() throws(TOMLSyntaxError) -> String {
        advance()
        var out: [UInt8] = []
        while true {
            guard let byte = peek(), byte != UInt8(ascii: "\n") else {
                throw error("unterminated string: a basic string must end on the line it starts")
            }
            switch byte {
            case UInt8(ascii: "\""):
                advance()
                return String(decoding: out, as: UTF8.self)
            case UInt8(ascii: "\\"):
                try parseEscape(into: &out)
            default:
                if Self.isForbiddenControl(byte) { throw error("\(describe(byte)) in a string (use an escape)") }
                out.append(byte)
                advance()
            }
        }
    }

    mutating func parseLiteralString() throws(TOMLSyntaxError) -> String {
        advance()
        var out: [UInt8] = []
        while true {
            guard let byte = peek(), byte != UInt8(ascii: "\n") else {
                throw error("unterminated string: a literal string must end on the line it starts")
            }
            if byte == UInt8(ascii: "'") {
                advance()
                return String(decoding: out, as: UTF8.self)
            }
            if Self.isForbiddenControl(byte) { throw error("\(describe(byte)) in a string") }
            out.append(byte)
            advance()
        }
    }

    mutating func parseMultilineBasicString() throws(TOMLSyntaxError) -> String {
        skip(3)
        skipNewlineAfterOpeningDelimiter()
        var out: [UInt8] = []
        while true {
            guard let byte = peek() else { throw error("unterminated multi-line string: expected '\"\"\"'") }
            switch byte {
            case UInt8(ascii: "\""):
                if try closeMultiline(quote: byte, into: &out) { return String(decoding: out, as: UTF8.self) }
            case UInt8(ascii: "\\"):
                if lineEndingBackslash() {
                    try skipSpacesCommentsAndNewlinesInString()
                } else {
                    try parseEscape(into: &out)
                }
            default:
                try appendMultilineByte(byte, into: &out)
            }
        }
    }

    mutating func parseMultilineLiteralString() throws(TOMLSyntaxError) -> String {
        skip(3)
        skipNewlineAfterOpeningDelimiter()
        var out: [UInt8] = []
        while true {
            guard let byte = peek() else { throw error("unterminated multi-line string: expected \"'''\"") }
            if byte == UInt8(ascii: "'") {
                if try closeMultiline(quote: byte, into: &out) { return String(decoding: out, as: UTF8.self) }
            } else {
                try appendMultilineByte(byte, into: &out)
            }
        }
    }

    mutating func skipNewlineAfterOpeningDelimiter() {
        if peek() == UInt8(ascii: "\n") {
            advance()
        } else if peek() == UInt8(ascii: "\r"), peek(1) == UInt8(ascii: "\n") {
            skip(2)
        }
    }

    /// At a quote inside a multi-line string: up to two quotes are content; three to five end the
    /// string (the first one or two of five are content).
    mutating func closeMultiline(quote: UInt8, into out: inout [UInt8]) throws(TOMLSyntaxError) -> Bool {
        var count = 0
        while peek(count) == quote { count += 1 }
        if count < 3 {
            out.append(contentsOf: repeatElement(quote, count: count))
            skip(count)
            return false
        }
        guard count <= 5 else { throw error("too many quotes at the end of a multi-line string") }
        out.append(contentsOf: repeatElement(quote, count: count - 3))
        skip(count)
        return true
    }

    mutating func appendMultilineByte(_ byte: UInt8, into out: inout [UInt8]) throws(TOMLSyntaxError) {
        if byte == UInt8(ascii: "\r"), peek(1) == UInt8(ascii: "\n") {
            out.append(UInt8(ascii: "\n"))
            skip(2)
            return
        }
        if byte != UInt8(ascii: "\n"), Self.isForbiddenControl(byte) {
            throw error("\(describe(byte)) in a string (use an escape)")
        }
        out.append(byte)
        advance()
    }

    /// A backslash followed only by spaces up to the end of the line.
    func lineEndingBackslash() -> Bool {
        var offset = 1
        while let byte = peek(offset), byte == UInt8(ascii: " ") || byte == UInt8(ascii: "\t") { offset += 1 }
        return peek(offset) == UInt8(ascii: "\n") || (peek(offset) == UInt8(ascii: "\r") && peek(offset + 1) == UInt8(ascii: "\n"))
    }

    mutating func skipSpacesCommentsAndNewlinesInString() throws(TOMLSyntaxError) {
        advance()
        while let byte = peek() {
            switch byte {
            case UInt8(ascii: " "), UInt8(ascii: "\t"), UInt8(ascii: "\n"):
                advance()
            case UInt8(ascii: "\r") where peek(1) == UInt8(ascii: "\n"):
                skip(2)
            default:
                return
            }
        }
    }

    mutating func parseEscape(into out: inout [UInt8]) throws(TOMLSyntaxError) {
        let start = position
        advance()
        guard let byte = peek() else { throw error("unterminated string after '\\'") }
        let simple: UInt8? = switch byte {
        case UInt8(ascii: "b"): 0x08
        case UInt8(ascii: "t"): 0x09
        case UInt8(ascii: "n"): 0x0A
        case UInt8(ascii: "f"): 0x0C
        case UInt8(ascii: "r"): 0x0D
        case UInt8(ascii: "\""): 0x22
        case UInt8(ascii: "\\"): 0x5C
        default: nil
        }
        if let simple {
            out.append(simple)
            advance()
            return
        }
        let digits = byte == UInt8(ascii: "u") ? 4 : byte == UInt8(ascii: "U") ? 8 : 0
        guard digits > 0 else {
            throw error("invalid escape sequence '\\\(describe(byte).trimmingQuotes)'", at: start)
        }
        advance()
        var scalar: UInt32 = 0
        for _ in 0..<digits {
            guard let digit = peek().flatMap(Self.hexDigitValue) else {
                throw error("'\\\(Character(Unicode.Scalar(byte)))' needs exactly \(digits) hexadecimal digits", at: start)
            }
            scalar = scalar << 4 | UInt32(digit)
            advance()
        }
        guard let unicode = Unicode.Scalar(scalar) else {
            throw error("escape '\\\(Character(Unicode.Scalar(byte)))\(String(scalar, radix: 16, uppercase: true))' is not a Unicode scalar value", at: start)
        }
        out.append(contentsOf: String(Character(unicode)).utf8)
    }

    static func hexDigitValue(_ byte: UInt8) -> UInt8? {
        switch byte {
        case UInt8(ascii: "0")...UInt8(ascii: "9"): byte - UInt8(ascii: "0")
        case UInt8(ascii: "a")...UInt8(ascii: "f"): byte - UInt8(ascii: "a") + 10
        case UInt8(ascii: "A")...UInt8(ascii: "F"): byte - UInt8(ascii: "A") + 10
        default: nil
        }
    }
}
