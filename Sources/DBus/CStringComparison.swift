import Glibc

// Comparing the NUL-terminated strings libdbus hands out with Swift strings, without making a
// Swift string of the C bytes: on a per-message path that allocation (and its release) costs
// more than the comparison itself.

enum CStringComparison {
    /// True when the NUL-terminated `c` holds exactly the bytes of `swift`.
    static func equal(_ c: UnsafePointer<CChar>, _ swift: String) -> Bool {
        compare(c, length: strlen(c), swift, prefixOnly: false)
    }

    /// True when the NUL-terminated `c` begins with the bytes of `swift`.
    static func hasPrefix(_ c: UnsafePointer<CChar>, _ swift: String) -> Bool {
        compare(c, length: strlen(c), swift, prefixOnly: true)
    }

    /// True when the `length` bytes at `c` are exactly the bytes of `swift`.
    static func equal(_ c: UnsafeRawPointer, length: Int, _ swift: String) -> Bool {
        var swift = swift
        return swift.withUTF8 { bytes in
            guard bytes.count == length else { return false }
            guard let base = bytes.baseAddress else { return true }
            return memcmp(c, base, length) == 0
        }
    }

    private static func compare(_ c: UnsafePointer<CChar>, length: Int, _ swift: String, prefixOnly: Bool) -> Bool {
        var swift = swift
        return swift.withUTF8 { bytes in
            // `length` bytes are readable at `c`, `bytes.count` at `bytes`: memcmp reads no more
            // than the shorter of the two.
            guard prefixOnly ? bytes.count <= length : bytes.count == length else { return false }
            guard let base = bytes.baseAddress else { return true }
            return memcmp(c, base, bytes.count) == 0
        }
    }
}
