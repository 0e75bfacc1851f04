// Case folding for the spellings BlueZ already uses (lower-case UUIDs, upper-case addresses),
// without building a new string when there is nothing to change: `lowercased()` and
// `uppercased()` build one every time, and device views and address lookups are made for every
// device on every pool evaluation.

extension String {
    /// `lowercased()`, but the string itself when it is ASCII without an upper-case letter.
    var lowercasedIfNeeded: String {
        isASCII(without: UInt8(ascii: "A")...UInt8(ascii: "Z")) ? self : lowercased()
    }

    /// `uppercased()`, but the string itself when it is ASCII without a lower-case letter.
    var uppercasedIfNeeded: String {
        isASCII(without: UInt8(ascii: "a")...UInt8(ascii: "z")) ? self : uppercased()
    }

    private func isASCII(without letters: ClosedRange<UInt8>) -> Bool {
        utf8.allSatisfy { $0 < 0x80 && !letters.contains($0) }
    }
}
