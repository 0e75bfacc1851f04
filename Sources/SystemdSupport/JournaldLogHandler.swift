import Logging

/// A swift-log `LogHandler` that writes native journald entries: `MESSAGE`, `PRIORITY`,
/// `SYSLOG_IDENTIFIER`, `CODE_FILE`/`CODE_LINE`/`CODE_FUNC`, and every metadata item as an
/// upper-case field (`device.address` → `DEVICE_ADDRESS`).
///
/// Guarantees: never throws or blocks on a missing journald (the transport drops the entry); only
/// valid field names are sent (see `JournalEntry`); metadata is a value, as swift-log requires.
/// Safe to use from any thread.
public struct JournaldLogHandler: LogHandler {
    public var metadata: Logger.Metadata = [:]
    public var metadataProvider: Logger.MetadataProvider?
    public var logLevel: Logger.Level
    public let identifier: String
    public let transport: any JournalTransport

    /// - Parameters:
    ///   - identifier: `SYSLOG_IDENTIFIER`, what `journalctl -t` filters on (e.g. `wearfleetd`).
    ///   - transport: `SDJournalTransport()` in production.
    public init(
        identifier: String,
        logLevel: Logger.Level = .info,
        metadataProvider: Logger.MetadataProvider? = nil,
        transport: any JournalTransport = SDJournalTransport()
    ) {
        self.identifier = identifier
        self.logLevel = logLevel
        self.metadataProvider = metadataProvider
        self.transport = transport
    }

    public subscript(metadataKey key: String) -> Logger.Metadata.Value? {
        get { metadata[key] }
        set { metadata[key] = newValue }
    }

    public func log(event: LogEvent) {
        let merged = LogMetadataText.metadata(of: event, handler: metadata, provider: metadataProvider)
        let fields = JournalEntry.fields(
            level: event.level, message: event.message.description, metadata: merged,
            identifier: identifier, file: event.file, function: event.function, line: event.line
        )
        transport.send(fields)
    }
}
