// A configuration file is UTF-8 text. Bytes that are not (a stray Latin-1 byte, a file cut in the
// middle of a character) or NUL bytes (a binary file, a bad copy) are reported where they are,
// like any other error in the file, rather than as "the file is not valid UTF-8".

/// Finds what keeps bytes from being a TOML document's text: invalid UTF-8 sequences and NUL
/// bytes, at the `file:line:column` an editor shows (columns count Unicode scalars, as the
/// parser's do; a leading byte order mark is not counted, as the parser skips it).
public enum TOMLEncodingCheck {
    /// At most this many problems are reported for one file; a binary file would have thousands.
    public static let reportedLimit = 10

    /// Every problem (up to `reportedLimit`, the last one then saying how many more there are),
    /// in file order; empty when `bytes` is UTF-8 text without NUL bytes.
    public static func problems(in bytes: [UInt8], file: String) -> [TOMLSyntaxError] {
        var problems: [TOMLSyntaxError] = []
        var more = 0
        var index = bytes.starts(with: [0xEF, 0xBB, 0xBF]) ? 3 : 0
        var line = 1
        var column = 1
        while index < bytes.count {
            let byte = bytes[index]
            var length = 1
            var message: String?
            switch byte {
            case 0x00:
                message = "NUL byte (U+0000): a configuration file is text"
            case UInt8(ascii: "\n"):
                line += 1
                column = 0
            case 0x01...0x7F:
                break
            default:
                let (valid, taken) = sequence(bytes, at: index)
                length = taken
                if !valid {
                    message = "not valid UTF-8 (byte 0x\(hex(byte)))\(byte >= 0xC2 && byte <= 0xF4 ? ": a character cut short" : "")"
                }
            }
            if let message {
                if problems.count < reportedLimit {
                    problems.append(TOMLSyntaxError(position: TOMLPosition(file: file, line: line, column: column), message: message))
                } else {
                    more += 1
                }
            }
            index += length
            column += 1
        }
        if more > 0, let last = problems.popLast() {
            problems.append(TOMLSyntaxError(position: last.position, message: last.message + " (and \(more) more such bytes)"))
        }
        return problems
    }

    /// Whether a well-formed UTF-8 sequence starts at `index` (RFC 3629: no overlong forms, no
    /// surrogates, nothing above U+10FFFF), and how many bytes it takes: the whole character,
    /// or for an ill-formed one its maximal subpart (the lead and the continuation bytes that
    /// fit it), so that one broken character is one problem.
    static func sequence(_ bytes: [UInt8], at index: Int) -> (valid: Bool, length: Int) {
        let length: Int
        var second: ClosedRange<UInt8> = 0x80...0xBF
        switch bytes[index] {
        case 0xC2...0xDF: length = 2
        case 0xE0: length = 3; second = 0xA0...0xBF
        case 0xED: length = 3; second = 0x80...0x9F
        case 0xE1...0xEF: length = 3
        case 0xF0: length = 4; second = 0x90...0xBF
        case 0xF4: length = 4; second = 0x80...0x8F
        case 0xF1...0xF3: length = 4
        default: return (false, 1)
        }
        for offset in 1..<length {
            let allowed = offset == 1 ? second : 0x80...0xBF
            guard index + offset < bytes.count, allowed.contains(bytes[index + offset]) else { return (false, offset) }
        }
        return (true, length)
    }

    private static func hex(_ byte: UInt8) -> String {
        String(byte, radix: 16, uppercase: true).leftPadded(to: 2)
    }
}
