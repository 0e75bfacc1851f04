import FoundationEssentials

// The daemon's run number: what makes a journal `SESSION_ID` (`<run>-<session>`) unique across
// runs while staying short to type. A counter kept next to the known-devices file, so it is as
// durable as what the daemon knows, and read and written once per start.

extension StateStore {
    public static let runNumberFileName = "run-number"

    public nonisolated var runNumberFile: URL { directory.appendingPathComponent(Self.runNumberFileName) }

    /// This start's number, and what was wrong with the counter if it was damaged.
    public struct RunStart: Sendable, Equatable {
        public var number: UInt64
        /// The counter held something other than a number (its first bytes, quoted): the count
        /// was lost, so `number` is the Unix time instead, past any count a directory reaches
        /// by starts (the counter goes on from it).
        public var damagedCounter: String?
    }

    /// Counts this start: the number after the one the state directory holds (1 when it holds
    /// none), written (atomically) before it is returned, so two runs never get the same number
    /// from one directory. A counter that is not a number is never taken as none: the numbers it
    /// counted may be in the journal, so the count goes on from the Unix time (`RunStart`).
    public func beginRun(now: Date = Date()) throws(StateStoreError) -> RunStart {
        var start = RunStart(number: 1, damagedCounter: nil)
        let data: Data?
        do {
            data = try Data(contentsOf: runNumberFile)
        } catch {
            // None yet is a first run; one that is there but cannot be read counted runs too.
            data = FileManager.default.fileExists(atPath: runNumberFile.path) ? Data("(unreadable)".utf8) : nil
        }
        if let data {
            let text = String(decoding: data, as: UTF8.self)
            if let previous = text.split(whereSeparator: \.isWhitespace).first.flatMap({ UInt64($0) }) {
                start.number = previous &+ 1
            } else {
                start.damagedCounter = "\"\(text.prefix(32).unicodeScalars.map { $0.isASCII && $0.value >= 0x20 ? String($0) : "?" }.joined())\""
                start.number = UInt64(max(1, now.timeIntervalSince1970.rounded(.down)))
            }
        }
        try writer.write(Data("\(start.number)\n".utf8), to: runNumberFile)
        return start
    }
}
