import TOML

// Durations are strings with units so that a config never leaves a reader guessing whether `30`
// meant seconds or milliseconds.

/// The duration syntax of the configuration: one or more `<integer><unit>` groups, largest unit
/// first, with units `d`, `h`, `m`, `s`, `ms`: `"250ms"`, `"2s"`, `"5m"`, `"1h30m"`, `"1m30s"`,
/// `"30d"`, `"0s"`. No spaces, signs or fractions (write `"1500ms"`, not `"1.5s"`).
public enum ConfigDuration {
    /// The longest duration accepted unless a setting says otherwise, one week: bounds
    /// arithmetic and catches unit slips.
    public static let maximum: Duration = .seconds(7 * 24 * 3600)

    /// The duration written in `text`, or nil when it does not follow the syntax above or
    /// exceeds `maximum` (at most about 31 years, whatever is asked).
    public static func parse(_ text: String, maximum: Duration = maximum) -> Duration? {
        let limit = min(maximum, .seconds(1_000_000_000)).components.seconds * 1000
        let bytes = Array(text.utf8)
        var index = 0
        var total: Int64 = 0
        var lastUnitRank = Int.max
        guard !bytes.isEmpty else { return nil }
        while index < bytes.count {
            var value: Int64 = 0
            let digitsStart = index
            while index < bytes.count, (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(bytes[index]) {
                guard index - digitsStart < 12 else { return nil }
                value = value * 10 + Int64(bytes[index] - UInt8(ascii: "0"))
                index += 1
            }
            guard index > digitsStart else { return nil }
            let unit: (rank: Int, milliseconds: Int64)
            if index + 1 < bytes.count, bytes[index] == UInt8(ascii: "m"), bytes[index + 1] == UInt8(ascii: "s") {
                unit = (0, 1)
                index += 2
            } else if index < bytes.count {
                switch bytes[index] {
                case UInt8(ascii: "s"): unit = (1, 1000)
                case UInt8(ascii: "m"): unit = (2, 60_000)
                case UInt8(ascii: "h"): unit = (3, 3_600_000)
                case UInt8(ascii: "d"): unit = (4, 86_400_000)
                default: return nil
                }
                index += 1
            } else {
                return nil
            }
            // Units must strictly decrease ("1h30m", not "30m1h" or "1s1s").
            guard unit.rank < lastUnitRank else { return nil }
            lastUnitRank = unit.rank
            let (product, overflow) = value.multipliedReportingOverflow(by: unit.milliseconds)
            guard !overflow else { return nil }
            total += product
            guard total <= limit else { return nil }
        }
        return .milliseconds(total)
    }

    /// The shortest spelling of `duration` in this syntax, rounded down to milliseconds.
    public static func format(_ duration: Duration) -> String {
        let milliseconds = duration.components.seconds * 1000 + duration.components.attoseconds / 1_000_000_000_000_000
        guard milliseconds > 0 else { return "0s" }
        var rest = milliseconds
        var text = ""
        for (unit, size) in [("d", Int64(86_400_000)), ("h", 3_600_000), ("m", 60_000), ("s", 1000), ("ms", 1)] where rest >= size {
            text += "\(rest / size)\(unit)"
            rest %= size
        }
        return text
    }
}
