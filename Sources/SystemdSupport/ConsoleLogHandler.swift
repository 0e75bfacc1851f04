import Foundation
import Logging

/// A swift-log `LogHandler` for people at a terminal: one line per event,
/// `<UTC time> <level, padded to 8> <message> key=value …`, metadata sorted by key.
///
/// Guarantees: exactly one line per event (newlines in the message or values are escaped as
/// `\n`), values with spaces, quotes or `=` are quoted, so a line can be split back into fields.
public struct ConsoleLogHandler: LogHandler {
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
        sink.write(line: Self.line(time: now(), level: event.level, message: event.message.description, metadata: merged))
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
