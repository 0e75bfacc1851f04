// Small text helpers for configuration messages.

extension String {
    /// Zero-padded on the left to `width` characters: `"7".leftPadded(to: 4)` is `"0007"`.
    package func leftPadded(to width: Int) -> String {
        count >= width ? self : String(repeating: "0", count: width - count) + self
    }

    /// `'q'` → `q`, for quoting a character inside another quoted text.
    var trimmingQuotes: String {
        hasPrefix("'") && hasSuffix("'") && count >= 2 ? String(dropFirst().dropLast()) : self
    }
}
