import Glibc

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
