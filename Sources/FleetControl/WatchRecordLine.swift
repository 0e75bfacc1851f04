import FoundationEssentials

// `wearfleetctl watch` prints one line per record; the records are the daemon's JSON (README,
// "Value JSON"), read tolerantly: keys this version does not know are ignored, and a record it
// cannot read at all is shown as it came rather than dropped.

/// The human line for one watch record.
public enum WatchRecordLine {
    private struct Record: Decodable {
        struct DecodeError: Decodable { var message: String? }
        var kind: String?
        var device: String?
        var name: String?
        var time: String?
        var summary: String?
        var state: String?
        var previous: String?
        var reason: String?
        var session: String?
        var adapter: String?
        var dropped: Int?
        var hex: String?
        var error: DecodeError?
    }

    /// `19:36:14.123Z  C0:FF:EE:00:00:01  Strap  heart_rate  72 bpm, RR 793/781 ms`;
    /// a state change: `…  state  ready (was discovering, session 3, hci0)`;
    /// lost records: `19:36:14.123Z  dropped  12 records lost so far (reading too slowly)`.
    public static func render(_ bytes: [UInt8]) -> String {
        guard let record = try? JSONDecoder().decode(Record.self, from: Data(bytes)), let kind = record.kind else {
            return TerminalText.sanitized(String(decoding: bytes, as: UTF8.self))
        }
        var columns = [clock(record.time)]
        if kind == "dropped" {
            columns += ["dropped", "\(record.dropped ?? 0) records lost so far (reading too slowly)"]
            return columns.joined(separator: "  ")
        }
        columns.append(record.device ?? "-")
        columns.append(TerminalText.sanitized(record.name ?? "-"))
        columns.append(kind)
        switch kind {
        case "state":
            var details = ["was \(record.previous ?? "?")"]
            if let reason = record.reason { details.append(reason) }
            if let session = record.session { details.append("session \(session)") }
            if let adapter = record.adapter { details.append(adapter) }
            columns.append("\(record.state ?? "?") (\(details.joined(separator: ", ")))")
        case "invalid":
            columns.append("undecodable: \(record.error?.message ?? "?") [\(record.hex ?? "")]")
        default:
            columns.append(TerminalText.sanitized(record.summary ?? record.hex ?? ""))
        }
        return columns.joined(separator: "  ")
    }

    /// `2026-11-24T19:36:14.123456Z` → `19:36:14.123Z`.
    static func clock(_ time: String?) -> String {
        guard let time, let t = time.firstIndex(of: "T") else { return time ?? "-" }
        let clock = time[time.index(after: t)...].dropLast()  // without "Z"
        return String(clock.prefix(12)) + "Z"
    }
}
