import Foundation
import Logging

/// A swift-log `LogHandler` for people at a terminal: one line per event,
/// `<UTC time> <level, padded to 8> <message> key=value …`, metadata sorted by key.
///
/// Guarantees: exactly one line per event (newlines in the message or values are escaped as
/// `\n`), values with spaces, quotes or `=` are quoted, so a line can be split back into fields.
public typealias ConsoleLogHandler = LineLogHandler<ConsoleLineFormat>

extension LineLogHandler where Format == ConsoleLineFormat {
    /// The line for one event; pure, for tests.
    public static func line(time: Date, level: Logger.Level, message: String, metadata: Logger.Metadata) -> String {
        ConsoleLineFormat.line(time: time, level: level, message: message, metadata: metadata)
    }
}

/// The console handler's line format.
public enum ConsoleLineFormat: LogLineFormat {
    public static func line(for event: LogEvent, metadata: Logger.Metadata, time: Date) -> String {
        line(time: time, level: event.level, message: event.message.description, metadata: metadata)
    }

    /// The line for one event; pure, for tests.
    public static func line(time: Date, level: Logger.Level, message: String, metadata: Logger.Metadata) -> String {
        var line = LogTimestamp.format(time) + " " + level.rawValue.padding(toLength: 8, withPad: " ", startingAt: 0)
            + " " + escapeNewlines(message)
        for (key, value) in metadata.sorted(by: { $0.key < $1.key }) {
            line += " " + escapeNewlines(key) + "=" + quoteIfNeeded(LogMetadataText.render(value))
        }
        return line
    }

    private static func escapeNewlines(_ text: String) -> String {
        guard text.contains(where: { $0.isNewline }) else { return text }
        return text.replacingOccurrences(of: "\r", with: "\\r").replacingOccurrences(of: "\n", with: "\\n")
    }

    private static func quoteIfNeeded(_ value: String) -> String {
        let needsQuotes = value.isEmpty || value.contains { $0 == " " || $0 == "\"" || $0 == "=" || $0.isNewline || $0 == "\t" }
        guard needsQuotes else { return value }
        let escaped = value.replacingOccurrences(of: "\\", with: "\\\\").replacingOccurrences(of: "\"", with: "\\\"")
        return "\"" + escapeNewlines(escaped) + "\""
    }
}
