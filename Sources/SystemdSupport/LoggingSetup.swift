import Logging

/// Installs the daemon's log handler once, at start-up.
public enum LoggingSetup {
    /// A handler for `format`. `identifier` becomes journald's `SYSLOG_IDENTIFIER`.
    public static func makeHandler(
        format: LogFormat, identifier: String, level: Logger.Level,
        metadataProvider: Logger.MetadataProvider? = nil
    ) -> any LogHandler {
        switch format {
        case .journal: JournaldLogHandler(identifier: identifier, logLevel: level, metadataProvider: metadataProvider)
        case .console: ConsoleLogHandler(logLevel: level, metadataProvider: metadataProvider)
        case .json: JSONLinesLogHandler(logLevel: level, metadataProvider: metadataProvider)
        }
    }

    /// Bootstraps swift-log with `format`, or the detected one when nil (`--log-format` not
    /// given), and returns the format in use. Call once: swift-log allows one bootstrap per process.
    @discardableResult
    public static func bootstrap(
        format: LogFormat?, identifier: String, level: Logger.Level,
        environment: [String: String]
    ) -> LogFormat {
        let chosen = format ?? LogFormat.detect(environment: environment)
        LoggingSystem.bootstrap { _ in makeHandler(format: chosen, identifier: identifier, level: level) }
        return chosen
    }
}
