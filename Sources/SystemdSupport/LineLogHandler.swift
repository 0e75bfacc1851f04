import FoundationEssentials
import Glibc
import Logging

/// How a line-oriented handler renders one event (console text, JSON lines).
public protocol LogLineFormat: Sendable {
    /// The whole line for `event`, with the handler's and the event's metadata already merged.
    static func line(for event: LogEvent, metadata: Logger.Metadata, time: Date) -> String
}

/// A swift-log `LogHandler` that writes one line per event to a sink, in `Format`. The console
/// and JSON-lines handlers are this handler with their own format; only the rendering differs.
public struct LineLogHandler<Format: LogLineFormat>: LogHandler {
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
        sink.write(line: Format.line(for: event, metadata: merged, time: now()))
    }
}
