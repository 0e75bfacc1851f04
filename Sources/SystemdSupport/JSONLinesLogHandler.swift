import FoundationEssentials
import Glibc
import Logging

/// A swift-log `LogHandler` that writes one JSON object per line, for log shippers.
///
/// Guarantees: one line per event, valid JSON, and a stable key order — `time`, `level`,
/// `message`, `metadata` (keys sorted; arrays and dictionaries stay JSON arrays and objects),
/// `source`, `file`, `line`, `function` — so lines diff and grep predictably.
public typealias JSONLinesLogHandler = LineLogHandler<JSONLinesFormat>

extension LineLogHandler where Format == JSONLinesFormat {
    /// The line for one event; pure, for tests.
    public static func line(
        time: Date, level: Logger.Level, message: String, metadata: Logger.Metadata,
        source: String, file: String, function: String, line: UInt
    ) -> String {
        JSONLinesFormat.line(
            time: time, level: level, message: message, metadata: metadata, source: source, file: file, function: function,
            line: line)
    }
}

/// The JSON-lines handler's line format.
public enum JSONLinesFormat: LogLineFormat {
    public static func line(for event: LogEvent, metadata: Logger.Metadata, time: Date) -> String {
        line(
            time: time, level: event.level, message: event.message.description, metadata: metadata,
            source: event.source, file: event.file, function: event.function, line: event.line)
    }

    /// The line for one event; pure, for tests.
    public static func line(
        time: Date, level: Logger.Level, message: String, metadata: Logger.Metadata,
        source: String, file: String, function: String, line: UInt
    ) -> String {
        var out = "{\"time\":" + quoted(LogTimestamp.format(time))
        out += ",\"level\":" + quoted(level.rawValue)
        out += ",\"message\":" + quoted(message)
        out += ",\"metadata\":" + object(metadata)
        out += ",\"source\":" + quoted(source)
        out += ",\"file\":" + quoted(file)
        out += ",\"line\":" + String(line)
        out += ",\"function\":" + quoted(function) + "}"
        return out
    }

    private static func object(_ metadata: Logger.Metadata) -> String {
        "{" + metadata.sorted(by: { $0.key < $1.key }).map { quoted($0.key) + ":" + value($0.value) }
            .joined(separator: ",") + "}"
    }

    private static func value(_ value: Logger.MetadataValue) -> String {
        switch value {
        case .string(let text): quoted(text)
        case .stringConvertible(let convertible): quoted(convertible.description)
        case .array(let values): "[" + values.map(Self.value).joined(separator: ",") + "]"
        case .dictionary(let dictionary): object(dictionary)
        }
    }

    /// A JSON string literal (RFC 8259): quote, backslash and control characters escaped.
    static func quoted(_ text: String) -> String {
        var out = "\""
        out.unicodeScalars.reserveCapacity(text.unicodeScalars.count + 2)
        for scalar in text.unicodeScalars {
            switch scalar {
            case "\"": out += "\\\""
            case "\\": out += "\\\\"
            case "\n": out += "\\n"
            case "\r": out += "\\r"
            case "\t": out += "\\t"
            case _ where scalar.value < 0x20:
                let hex = String(scalar.value, radix: 16)
                out += "\\u" + String(repeating: "0", count: 4 - hex.count) + hex
            default: out.unicodeScalars.append(scalar)
            }
        }
        return out + "\""
    }
}
