import Synchronization

/// Keeps lines in memory: for tests, and for capturing output in tools.
public final class MemoryLogSink: LogLineSink {
    private let storage = Mutex<[String]>([])

    public init() {}

    public func write(line: String) { storage.withLock { $0.append(line) } }

    public var lines: [String] { storage.withLock { $0 } }
}
