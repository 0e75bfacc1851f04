// Text from devices (advertised names, decoded values) reaches an operator's terminal: it is
// untrusted and may hold escape sequences, newlines or bidirectional overrides, and it may be
// wider than it is long (CJK, emoji). These functions make it safe and measure it in columns.

/// Measuring, cleaning and fitting text for a terminal table.
public enum TerminalText {
    /// `text` with every control character (C0, C1, DEL), line or paragraph separator and
    /// bidirectional override replaced by `?`, so it cannot move the cursor, change colours or
    /// reorder what follows it.
    public static func sanitized(_ text: String) -> String {
        var result = String.UnicodeScalarView()
        for scalar in text.unicodeScalars {
            result.append(isUnsafe(scalar) ? "?" : scalar)
        }
        return String(result)
    }

    /// The number of terminal columns `text` takes: two for wide characters (East Asian wide and
    /// full-width, emoji presentation), zero for zero-width ones, one otherwise. Combining marks
    /// belong to their base character (one `Character`).
    public static func width(_ text: String) -> Int {
        text.reduce(0) { $0 + width(of: $1) }
    }

    /// `text` cut to at most `columns` columns, ending in "…" when something was cut.
    public static func truncated(_ text: String, toWidth columns: Int) -> String {
        guard width(text) > columns else { return text }
        guard columns > 0 else { return "" }
        var result = ""
        var used = 0
        for character in text {
            let characterWidth = width(of: character)
            if used + characterWidth > columns - 1 { break }
            result.append(character)
            used += characterWidth
        }
        return result + "…"
    }

    /// `text` padded with spaces to `columns` columns, on the right (`.left`) or the left.
    public static func padded(_ text: String, toWidth columns: Int, alignment: TextTable.Alignment) -> String {
        let padding = String(repeating: " ", count: max(0, columns - width(text)))
        return alignment == .left ? text + padding : padding + text
    }

    // MARK: - Character classes

    static func width(of character: Character) -> Int {
        guard let first = character.unicodeScalars.first else { return 0 }
        if character.unicodeScalars.contains(where: \.properties.isEmojiPresentation) { return 2 }
        // A variation selector 16 asks for the emoji (wide) form of a text-default symbol.
        if character.unicodeScalars.contains(where: { $0.value == 0xFE0F }), first.properties.isEmoji { return 2 }
        switch first.properties.generalCategory {
        case .nonspacingMark, .enclosingMark, .format: return 0
        default: break
        }
        return isWide(first) ? 2 : 1
    }

    private static func isUnsafe(_ scalar: Unicode.Scalar) -> Bool {
        switch scalar.properties.generalCategory {
        case .control, .lineSeparator, .paragraphSeparator: return true
        default: break
        }
        switch scalar.value {
        case 0x200E, 0x200F, 0x202A...0x202E, 0x2066...0x2069: return true  // bidirectional marks and overrides
        default: return false
        }
    }

    /// East Asian Wide and Fullwidth ranges (Unicode's EastAsianWidth.txt, W and F), which Swift
    /// does not expose as a property.
    private static func isWide(_ scalar: Unicode.Scalar) -> Bool {
        switch scalar.value {
        case 0x1100...0x115F, 0x231A...0x231B, 0x2329...0x232A, 0x2E80...0x303E, 0x3041...0x33FF,
            0x3400...0x4DBF, 0x4E00...0x9FFF, 0xA000...0xA4CF, 0xA960...0xA97F, 0xAC00...0xD7A3,
            0xF900...0xFAFF, 0xFE10...0xFE19, 0xFE30...0xFE6F, 0xFF00...0xFF60, 0xFFE0...0xFFE6,
            0x1F300...0x1F64F, 0x1F900...0x1F9FF, 0x20000...0x2FFFD, 0x30000...0x3FFFD:
            return true
        default:
            return false
        }
    }
}
