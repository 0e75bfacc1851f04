import FoundationEssentials
import Glibc
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
        var line = LogTimestamp.format(time) + " " + padded(level.rawValue, to: 8)
            + " " + escapeNewlines(message)
        for (key, value) in metadata.sorted(by: { $0.key < $1.key }) {
            line += " " + escapeNewlines(key) + "=" + quoteIfNeeded(LogMetadataText.render(value))
        }
        return line
    }

    private static func padded(_ text: String, to width: Int) -> String {
        text.count >= width ? String(text.prefix(width)) : text + String(repeating: " ", count: width - text.count)
    }

    private static func escapeNewlines(_ text: String) -> String {
        guard text.contains(where: { $0.isNewline }) else { return text }
        return escaping(text) { scalar in
            switch scalar {
            case "\r": "\\r"
            case "\n": "\\n"
            default: nil
            }
        }
    }

    /// `text` with each Unicode scalar that `replacement` maps replaced (scalars, not Characters:
    /// "\r\n" is one Character but two scalars to escape).
    private static func escaping(_ text: String, _ replacement: (Unicode.Scalar) -> String?) -> String {
        var result = ""
        result.unicodeScalars.reserveCapacity(text.unicodeScalars.count)
        for scalar in text.unicodeScalars {
            if let replaced = replacement(scalar) { result += replaced } else { result.unicodeScalars.append(scalar) }
        }
        return result
    }

    private static func quoteIfNeeded(_ value: String) -> String {
        let needsQuotes = value.isEmpty || value.contains { $0 == " " || $0 == "\"" || $0 == "=" || $0.isNewline || $0 == "\t" }
        guard needsQuotes else { return value }
        let escaped = escaping(value) { scalar in
            switch scalar {
            case "\\": "\\\\"
            case "\"": "\\\""
            case "\r": "\\r"
            case "\n": "\\n"
            default: nil
            }
        }
        return "\"" + escaped + "\""
    }
}
