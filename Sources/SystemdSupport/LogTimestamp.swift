import FoundationEssentials
import Glibc

/// RFC 3339 UTC timestamps with milliseconds (`2026-11-22T19:58:01.123Z`), formatted with
/// `gmtime_r` so handlers need no shared, non-thread-safe formatter.
enum LogTimestamp {
    static func format(_ date: Date) -> String {
        // Nearest millisecond: a Double's seconds-since-1970 is not exact (…481.123 is …481.12299…).
        let totalMillis = Int64((date.timeIntervalSince1970 * 1000).rounded())
        var seconds = time_t(totalMillis >= 0 ? totalMillis / 1000 : (totalMillis - 999) / 1000)
        let millis = Int(totalMillis - Int64(seconds) * 1000)
        var parts = tm()
        gmtime_r(&seconds, &parts)
        return pad(Int(parts.tm_year) + 1900, 4) + "-" + pad(Int(parts.tm_mon) + 1, 2) + "-" + pad(Int(parts.tm_mday), 2)
            + "T" + pad(Int(parts.tm_hour), 2) + ":" + pad(Int(parts.tm_min), 2) + ":" + pad(Int(parts.tm_sec), 2)
            + "." + pad(millis, 3) + "Z"
    }

    private static func pad(_ value: Int, _ width: Int) -> String {
        let text = String(value)
        return text.count >= width ? text : String(repeating: "0", count: width - text.count) + text
    }
}
