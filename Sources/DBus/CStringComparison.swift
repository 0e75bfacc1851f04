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
        compare(c, length: length, swift, prefixOnly: false)
    }

    private static func compare(_ c: UnsafeRawPointer, length: Int, _ swift: String, prefixOnly: Bool) -> Bool {
        // The string's own storage, borrowed: `withUTF8` would need a mutable copy of it, and
        // that copy costs a retain and a release of the storage per comparison. Native strings
        // (every string on Linux) always have contiguous UTF-8; the fallback is for any other.
        let compared = swift.utf8.withContiguousStorageIfAvailable { bytes in
            matches(c, length: length, bytes, prefixOnly: prefixOnly)
        }
        if let compared { return compared }
        return compareCopying(c, length: length, swift, prefixOnly: prefixOnly)
    }

    /// The fallback, out of line: written inline, the copy it makes of the string had the
    /// compiler retain and release the string's storage on every path (two atomic operations per
    /// comparison, ~8 comparisons per notification).
    @inline(never)
    private static func compareCopying(_ c: UnsafeRawPointer, length: Int, _ swift: String, prefixOnly: Bool) -> Bool {
        Array(swift.utf8).withUnsafeBufferPointer { matches(c, length: length, $0, prefixOnly: prefixOnly) }
    }

    private static func matches(
        _ c: UnsafeRawPointer, length: Int, _ bytes: UnsafeBufferPointer<UInt8>, prefixOnly: Bool
    ) -> Bool {
        // `length` bytes are readable at `c`, `bytes.count` at `bytes`: memcmp reads no more
        // than the shorter of the two.
        guard prefixOnly ? bytes.count <= length : bytes.count == length else { return false }
        guard let base = bytes.baseAddress else { return true }
        return memcmp(c, base, bytes.count) == 0
    }
}
