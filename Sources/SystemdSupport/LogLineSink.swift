/// Where the console and JSON-lines handlers put their lines.
public protocol LogLineSink: Sendable {
    /// Writes one complete line (the sink adds the newline). Must not interleave with other calls.
    func write(line: String)
}
