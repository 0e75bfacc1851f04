// Integers and floats. The token is collected first and then validated as a whole, so a malformed
// number is reported once, at its first character, with the whole token in the message.

extension TOMLParser {
    mutating func parseNumber() throws(TOMLSyntaxError) -> TOMLValue {
        let start = position
        if looksLikeDateOrTime() {
            throw error("dates and times are not supported in this configuration", at: start)
        }
        let from = index
        while let byte = peek(), Self.isNumberByte(byte) { advance() }
        let token = String(decoding: bytes[from..<index], as: UTF8.self)
        guard let value = Self.number(from: token) else {
            throw error("'\(token)' is not a valid number", at: start)
        }
        switch value {
        case .success(let value): return value
        case .failure(let failure): throw error(failure.message, at: start)
        }
    }

    func looksLikeDateOrTime() -> Bool {
        func digit(_ offset: Int) -> Bool {
            guard let byte = peek(offset) else { return false }
            return (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(byte)
        }
        return (digit(0) && digit(1) && digit(2) && digit(3) && peek(4) == UInt8(ascii: "-"))
            || (digit(0) && digit(1) && peek(2) == UInt8(ascii: ":"))
    }

    static func isNumberByte(_ byte: UInt8) -> Bool {
        isBareKeyByte(byte) || byte == UInt8(ascii: "+") || byte == UInt8(ascii: ".")
    }

    /// `nil` when `token` is not a number at all; `.failure` with a message when it is one that
    /// cannot be represented.
    static func number(from token: String) -> Result<TOMLValue, NumberError>? {
        var body = Substring(token)
        var negative = false
        if let sign = body.first, sign == "+" || sign == "-" {
            negative = sign == "-"
            body = body.dropFirst()
        }
        switch body {
        case "inf": return .success(.float(negative ? -.infinity : .infinity))
        case "nan": return .success(.float(.nan))
        default: break
        }
        if body.hasPrefix("0x") || body.hasPrefix("0o") || body.hasPrefix("0b") {
            guard token.first != "+", token.first != "-" else { return nil }
            let radix = body.hasPrefix("0x") ? 16 : body.hasPrefix("0o") ? 8 : 2
            guard let digits = digitsWithUnderscores(body.dropFirst(2), radix: radix) else { return nil }
            guard let value = Int64(digits, radix: radix) else {
                return .failure(NumberError(message: "integer '\(token)' does not fit in 64 bits"))
            }
            return .success(.integer(value))
        }
        if body.contains(where: { $0 == "." || $0 == "e" || $0 == "E" }) {
            return float(body, negative: negative, token: token)
        }
        guard let digits = digitsWithUnderscores(body, radix: 10), !hasLeadingZero(digits) else { return nil }
        guard let value = Int64((negative ? "-" : "") + digits) else {
            return .failure(NumberError(message: "integer '\(token)' does not fit in 64 bits"))
        }
        return .success(.integer(value))
    }

    /// `int [. digits] [(e|E) [+|-] digits]`, each digit run with underscores only between digits.
    static func float(_ body: Substring, negative: Bool, token: String) -> Result<TOMLValue, NumberError>? {
        var mantissa = body
        var exponent: Substring?
        if let e = body.firstIndex(where: { $0 == "e" || $0 == "E" }) {
            mantissa = body[..<e]
            exponent = body[body.index(after: e)...]
        }
        let parts = mantissa.split(separator: ".", omittingEmptySubsequences: false)
        guard parts.count <= 2, let integerPart = digitsWithUnderscores(parts[0], radix: 10),
              !hasLeadingZero(integerPart) else { return nil }
        var text = (negative ? "-" : "") + integerPart
        if parts.count == 2 {
            guard let fraction = digitsWithUnderscores(parts[1], radix: 10) else { return nil }
            text += "." + fraction
        }
        if var exponent {
            var sign = ""
            if let first = exponent.first, first == "+" || first == "-" {
                sign = String(first)
                exponent = exponent.dropFirst()
            }
            guard let digits = digitsWithUnderscores(exponent, radix: 10) else { return nil }
            text += "e" + sign + digits
        }
        guard let value = Double(text) else { return nil }
        guard value.isFinite else { return .failure(NumberError(message: "float '\(token)' is out of range")) }
        return .success(.float(value))
    }

    /// The digits of `text` without underscores, or nil when it is empty, holds a non-digit, or
    /// has an underscore that is not between two digits.
    static func digitsWithUnderscores(_ text: Substring, radix: Int) -> String? {
        guard let first = text.first, let last = text.last, first != "_", last != "_" else { return nil }
        var digits = ""
        var previousWasUnderscore = false
        for character in text {
            if character == "_" {
                if previousWasUnderscore { return nil }
                previousWasUnderscore = true
                continue
            }
            guard let value = character.hexDigitValue, value < radix, character.isASCII else { return nil }
            digits.append(character)
            previousWasUnderscore = false
        }
        return digits
    }

    static func hasLeadingZero(_ digits: String) -> Bool {
        digits.count > 1 && digits.hasPrefix("0")
    }

    struct NumberError: Error {
        var message: String
    }
}

