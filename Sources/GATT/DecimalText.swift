// Key/value renderings must be stable across platforms and locales, and GATT avoids Foundation,
// so numbers are formatted with integer arithmetic only: no floating-point rounding surprises.

/// Integer-only number formatting for the key/value rendering.
enum DecimalText {
    /// `mantissa × 10^exponent`, exactly, in plain decimal notation.
    static func scaled(_ mantissa: Int64, exponent: Int) -> String {
        let sign = mantissa < 0 ? "-" : ""
        var digits = String(mantissa.magnitude)
        if exponent >= 0 {
            guard mantissa != 0 else { return "0" }
            digits += String(repeating: "0", count: exponent)
            return sign + digits
        }
        let fractionCount = -exponent
        if digits.count <= fractionCount {
            digits = String(repeating: "0", count: fractionCount - digits.count + 1) + digits
        }
        let split = digits.index(digits.endIndex, offsetBy: -fractionCount)
        return sign + digits[..<split] + "." + digits[split...]
    }

    /// `numerator / denominator` rounded half-to-even to `fractionDigits` places.
    /// `denominator` must be positive; callers pass unit constants.
    static func ratio(_ numerator: Int64, over denominator: Int64, fractionDigits: Int) -> String {
        var scale: Int64 = 1
        for _ in 0..<fractionDigits { scale *= 10 }
        let scaledNumerator = numerator.magnitude * scale.magnitude
        let divisor = denominator.magnitude
        var quotient = scaledNumerator / divisor
        let remainder = scaledNumerator % divisor
        if remainder * 2 > divisor || (remainder * 2 == divisor && quotient % 2 == 1) {
            quotient += 1
        }
        let signed = numerator < 0 && quotient != 0 ? -Int64(quotient) : Int64(quotient)
        return scaled(signed, exponent: -fractionDigits)
    }

    /// `text` without the trailing zeros of its fraction (and without a bare trailing point).
    static func trimmingZeros(_ text: String) -> String {
        guard text.contains(".") else { return text }
        var trimmed = Substring(text)
        while trimmed.last == "0" { trimmed = trimmed.dropLast() }
        if trimmed.last == "." { trimmed = trimmed.dropLast() }
        return trimmed == "-0" ? "0" : String(trimmed)
    }

    /// Lower-case hexadecimal, zero-padded to `digits`, no prefix.
    static func hex(_ value: UInt64, digits: Int) -> String {
        let text = String(value, radix: 16)
        return text.count >= digits ? text : String(repeating: "0", count: digits - text.count) + text
    }

    /// Lower-case hexadecimal of a byte sequence, two digits per byte, no separators.
    static func hex(bytes: some Sequence<UInt8>) -> String {
        let alphabet: [Character] = ["0", "1", "2", "3", "4", "5", "6", "7", "8", "9", "a", "b", "c", "d", "e", "f"]
        var text = ""
        for byte in bytes {
            text.append(alphabet[Int(byte >> 4)])
            text.append(alphabet[Int(byte & 0x0F)])
        }
        return text
    }

    /// Decimal, zero-padded to `width`.
    static func padded(_ value: some BinaryInteger, width: Int) -> String {
        let text = String(value)
        return text.count >= width ? text : String(repeating: "0", count: width - text.count) + text
    }
}
