// Case folding for the spellings BlueZ already uses (lower-case UUIDs, upper-case addresses),
// without building a new string when there is nothing to change.

extension String {
    /// `lowercased()`, but the string itself when it is ASCII without an upper-case letter:
    /// BlueZ spells UUIDs in lower case already, and `lowercased()` builds a new string every
    /// time (a device object's view is made for every device on every pool evaluation).
    var lowercasedIfNeeded: String {
        utf8.allSatisfy { $0 < 0x80 && !(UInt8(ascii: "A")...UInt8(ascii: "Z")).contains($0) } ? self : lowercased()
    }

    /// `uppercased()`, but the string itself when it is ASCII without a lower-case letter (BlueZ
    /// spells addresses in upper case, and the fleet looks devices up by address per evaluation).
    var uppercasedIfNeeded: String {
        utf8.allSatisfy { $0 < 0x80 && !(UInt8(ascii: "a")...UInt8(ascii: "z")).contains($0) } ? self : uppercased()
    }
}
