import FleetCore
import FoundationEssentials

// What `wearfleetctl replay` prints: one line per state change, as text or as JSON.

extension Replay.StateChange {
    /// `[   1234.567890] AA:BB:CC:DD:EE:FF backingOff(…) → connecting session 3 cause transient`;
    /// the time is the daemon's monotonic clock, as `journalctl -o short-monotonic` shows it.
    public var line: String {
        var text = "[\(Self.seconds(at))] \(device) \(from) → \(to) session \(session)"
        if let cause { text += " cause \(cause.rawValue)" }
        return text
    }

    /// One JSON object: `run`, `at` (monotonic nanoseconds), `device`, `from`, `to` (state names
    /// with their details), `session` and `cause` (absent when there was none).
    public func json(run: String) throws -> String {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        let line = JSONLine(
            run: run, at: at.nanoseconds, device: device, from: from.description, to: to.description, session: session,
            cause: cause?.rawValue)
        return String(decoding: try encoder.encode(line), as: UTF8.self)
    }

    private struct JSONLine: Encodable {
        var run: String
        var at: Int64
        var device: DeviceID
        var from: String
        var to: String
        var session: UInt64
        var cause: String?
    }

    /// Seconds with six decimals, the whole seconds right-aligned in six columns.
    static func seconds(_ instant: MonotonicInstant) -> String {
        let sign = instant.nanoseconds < 0 ? "-" : ""
        let magnitude = instant.nanoseconds.magnitude
        let whole = String(magnitude / 1_000_000_000)
        let micro = String(magnitude % 1_000_000_000 / 1_000)
        let integral = sign + whole
        return String(repeating: " ", count: max(0, 6 - integral.count)) + integral + "."
            + String(repeating: "0", count: 6 - micro.count) + micro
    }
}
