import Foundation
import Logging

/// A swift-log `LogHandler` that writes one JSON object per line, for log shippers.
///
/// Guarantees: one line per event, valid JSON, and a stable key order — `time`, `level`,
/// `message`, `metadata` (keys sorted; arrays and dictionaries stay JSON arrays and objects),
/// `source`, `file`, `line`, `function` — so lines diff and grep predictably.
public struct JSONLinesLogHandler: LogHandler {
    public var metadata: Logger.Metadata = [:]
    public var metadataProvider: Logger.MetadataProvider?
    public var logLevel: Logger.Level
    private let sink: any LogLineSink
    private let now: @Sendable () -> Date

    public init(
        logLevel: Logger.Level = .info,
        metadataProvider: Logger.MetadataProvider? = nil,
        sink: any LogLineSink = StandardErrorSink(),
        now: @escaping @Sendable () -> Date = { Date() }
    ) {
        self.logLevel = logLevel
        self.metadataProvider = metadataProvider
        self.sink = sink
        self.now = now
    }

    public subscript(metadataKey key: String) -> Logger.Metadata.Value? {
        get { metadata[key] }
        set { metadata[key] = newValue }
    }

    public func log(event: LogEvent) {
        let merged = LogMetadataText.metadata(of: event, handler: metadata, provider: metadataProvider)
        sink.write(line: Self.line(
            time: now(), level: event.level, message: event.message.description, metadata: merged,
            source: event.source, file: event.file, function: event.function, line: event.line
        ))
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
