import Glibc
import Synchronization

/// Where the console and JSON-lines handlers put their lines.
public protocol LogLineSink: Sendable {
    /// Writes one complete line (the sink adds the newline). Must not interleave with other calls.
    func write(line: String)
}

/// Writes lines to standard error, one `write(2)` per line so concurrent loggers never
/// interleave within a line (lines up to `PIPE_BUF` are atomic on pipes, which is what systemd
/// and container runtimes give us).
public struct StandardErrorSink: LogLineSink {
    public init() {}

    public func write(line: String) {
        var bytes = Array(line.utf8)
        bytes.append(UInt8(ascii: "\n"))
        bytes.withUnsafeBytes { raw in
            guard let base = raw.baseAddress else { return }
            var offset = 0
            while offset < raw.count {
                let written = Glibc.write(2, base + offset, raw.count - offset)
                if written < 0 {
                    if errno == EINTR { continue }
                    return  // Nowhere left to report a logging failure.
                }
                offset += written
            }
        }
    }
}

/// Keeps lines in memory: for tests, and for capturing output in tools.
public final class MemoryLogSink: LogLineSink {
    private let storage = Mutex<[String]>([])

    public init() {}

    public func write(line: String) { storage.withLock { $0.append(line) } }

    public var lines: [String] { storage.withLock { $0 } }
}
