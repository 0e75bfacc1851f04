import FoundationEssentials

// The daemon's run number: what makes a journal `SESSION_ID` (`<run>-<session>`) unique across
// runs while staying short to type. A counter kept next to the known-devices file, so it is as
// durable as what the daemon knows, and read and written once per start.

extension StateStore {
    public static let runNumberFileName = "run-number"

    public nonisolated var runNumberFile: URL { directory.appendingPathComponent(Self.runNumberFileName) }

    /// Counts this start: the number after the one the state directory holds (1 when it holds
    /// none, or something that is not a number), written (atomically) before it is returned, so
    /// two runs never get the same number from one directory.
    public func beginRun() throws(StateStoreError) -> UInt64 {
        let previous = (try? Data(contentsOf: runNumberFile))
            .flatMap { String(decoding: $0, as: UTF8.self).split(whereSeparator: \.isWhitespace).first }
            .flatMap { UInt64($0) } ?? 0
        let run = previous &+ 1
        try writer.write(Data("\(run)\n".utf8), to: runNumberFile)
        return run
    }
}
