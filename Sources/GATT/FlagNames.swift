// Status bit fields render as the names of the bits that are set, so a log line reads
// `measurement_ongoing,early_estimated_data`, not `0x0060`; unnamed (reserved) bits stay visible.

/// Rendering of bit sets as comma-separated names.
enum FlagNames {
    /// Names of the set bits, lowest first: `names[i]` for bit i, `bit_i` when unnamed or empty.
    static func join(rawValue: UInt64, names: [String]) -> String {
        var parts: [String] = []
        var remaining = rawValue
        var bit = 0
        while remaining != 0 {
            if remaining & 1 == 1 {
                parts.append(bit < names.count && !names[bit].isEmpty ? names[bit] : "bit_\(bit)")
            }
            remaining >>= 1
            bit += 1
        }
        return parts.joined(separator: ",")
    }
}
