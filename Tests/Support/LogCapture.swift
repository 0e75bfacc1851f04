import Logging
import Synchronization

/// Log entries kept in memory, for tests that check what a part of the daemon logged: give a
/// test's code `capture.logger`, then read `entries`.
public final class LogCapture: Sendable {
    public struct Entry: Sendable {
        public var level: Logger.Level
        public var message: String
        /// The logger's own metadata merged with the entry's.
        public var metadata: Logger.Metadata
        /// The entry's `event` metadata, if it has one.
        public var event: String? {
            if case .string(let name)? = metadata["event"] { name } else { nil }
        }
    }

    private let kept = Mutex<[Entry]>([])
    /// Keep only about the newest this many (nil: all).
    private let limit: Int?

    public init(keepingNewest limit: Int? = nil) {
        self.limit = limit
    }

    public var entries: [Entry] { kept.withLock { $0 } }

    /// A logger at `level` whose entries are kept here.
    public func logger(label: String, level: Logger.Level = .trace) -> Logger {
        var logger = Logger(label: label) { _ in Handler(capture: self) }
        logger.logLevel = level
        return logger
    }

    fileprivate func keep(_ entry: Entry) {
        kept.withLock { entries in
            entries.append(entry)
            // Trimmed in batches, so keeping one costs no more than an append on average.
            if let limit, entries.count >= 2 * limit { entries.removeFirst(entries.count - limit) }
        }
    }

    private struct Handler: LogHandler {
        let capture: LogCapture
        var metadata: Logger.Metadata = [:]
        var logLevel: Logger.Level = .trace

        subscript(metadataKey key: String) -> Logger.Metadata.Value? {
            get { metadata[key] }
            set { metadata[key] = newValue }
        }

        func log(event: LogEvent) {
            let merged = metadata.merging(event.metadata ?? [:], uniquingKeysWith: { $1 })
            capture.keep(Entry(level: event.level, message: "\(event.message)", metadata: merged))
        }
    }
}
