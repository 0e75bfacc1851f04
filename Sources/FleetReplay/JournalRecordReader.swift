import FleetCore
import FoundationEssentials

/// Reads `journalctl -o json` output, one entry per line, and keeps the recorded inputs in it.
///
/// The journal is external input: any line may be cut, edited or from another program. A line
/// that is not a JSON object, or whose `WEARFLEET_INPUT` does not decode, is counted as bad
/// (with its line number and why) and skipped; entries without `WEARFLEET_INPUT` (the daemon's
/// other logs, other units) are counted and skipped. Nothing in a line can make reading fail.
public struct JournalRecordReader: Sendable {
    /// A recorded input with the run it belongs to.
    public struct Entry: Sendable, Hashable {
        public var run: String
        public var record: RecordedInput

        public init(run: String, record: RecordedInput) {
            self.run = run
            self.record = record
        }
    }

    /// A line that could not be read, and why.
    public struct BadLine: Sendable, Hashable, CustomStringConvertible {
        public var lineNumber: Int
        public var reason: String

        public var description: String { "line \(lineNumber): \(reason)" }
    }

    /// The bad lines kept for reporting (the first `keptBadLines`); `badLineCount` counts all.
    public static let keptBadLines = 20

    public private(set) var entries: [Entry] = []
    /// Journal entries that are not recorded inputs.
    public private(set) var otherEntries = 0
    public private(set) var badLineCount = 0
    public private(set) var badLines: [BadLine] = []
    private var lineNumber = 0

    public init() {}

    /// Reads one line of `journalctl -o json` output; blank lines are skipped.
    public mutating func read(line: some StringProtocol) {
        lineNumber += 1
        guard line.contains(where: { !$0.isWhitespace }) else { return }
        let fields: JournalFields
        do {
            fields = try JSONDecoder().decode(JournalFields.self, from: Data(line.utf8))
        } catch {
            return reject("not a journal entry in JSON")
        }
        guard let field = fields.input else {
            otherEntries += 1
            return
        }
        guard let text = field.text else {
            return reject("WEARFLEET_INPUT is empty or cut (journalctl prints fields over 4096 bytes as null unless given --all)")
        }
        do {
            let record = try RecordedInput(json: text)
            entries.append(Entry(run: fields.run?.text ?? "unknown", record: record))
        } catch {
            reject("WEARFLEET_INPUT is not a recorded input (\(Self.summary(of: error)))")
        }
    }

    /// Reads every line of `text`.
    public mutating func read(text: String) {
        for line in text.split(separator: "\n", omittingEmptySubsequences: false) { read(line: line) }
    }

    private mutating func reject(_ reason: String) {
        badLineCount += 1
        if badLines.count < Self.keptBadLines { badLines.append(BadLine(lineNumber: lineNumber, reason: reason)) }
    }

    /// Where a record failed to decode, in a few words.
    private static func summary(of error: any Error) -> String {
        guard let error = error as? DecodingError else { return "\(error)" }
        let context: DecodingError.Context
        switch error {
        case .dataCorrupted(let found), .keyNotFound(_, let found), .typeMismatch(_, let found), .valueNotFound(_, let found):
            context = found
        @unknown default:
            return "\(error)"
        }
        let path = context.codingPath.map { $0.intValue.map(String.init) ?? $0.stringValue }.joined(separator: ".")
        return path.isEmpty ? context.debugDescription : "\(path): \(context.debugDescription)"
    }
}

/// The fields of one journal entry that replay reads; every other field is ignored. A field
/// that is present but null (too large for `journalctl` without `--all`) is `.other`, not nil.
/// A line of `wearfleetd --log-format json` carries them in its `metadata`, as logged
/// (`wearfleet_input`), rather than as journal fields (`WEARFLEET_INPUT`).
private struct JournalFields: Decodable {
    var input: JournalFieldValue?
    var run: JournalFieldValue?

    private struct Key: CodingKey {
        var stringValue: String
        var intValue: Int? { nil }
        init(stringValue: String) { self.stringValue = stringValue }
        init?(intValue: Int) { nil }

        static let input = Key(stringValue: RecordingField.journalName(RecordingField.input))
        static let run = Key(stringValue: RecordingField.journalName(RecordingField.run))
        static let metadata = Key(stringValue: "metadata")
        static let loggedInput = Key(stringValue: RecordingField.input)
        static let loggedRun = Key(stringValue: RecordingField.run)
    }

    init(from decoder: any Decoder) throws {
        let fields = try decoder.container(keyedBy: Key.self)
        if !fields.contains(.input), !fields.contains(.run), fields.contains(.metadata),
            let metadata = try? fields.nestedContainer(keyedBy: Key.self, forKey: .metadata)
        {
            input = metadata.contains(.loggedInput) ? try metadata.decode(JournalFieldValue.self, forKey: .loggedInput) : nil
            run = metadata.contains(.loggedRun) ? try metadata.decode(JournalFieldValue.self, forKey: .loggedRun) : nil
            return
        }
        input = fields.contains(.input) ? try fields.decode(JournalFieldValue.self, forKey: .input) : nil
        run = fields.contains(.run) ? try fields.decode(JournalFieldValue.self, forKey: .run) : nil
    }
}

/// A field as `journalctl -o json` prints it: a string; an array of bytes when the value is not
/// printable UTF-8; null when it is too large (without `--all`); an array when the entry has
/// the field more than once.
private enum JournalFieldValue: Decodable {
    case text(String)
    case bytes([UInt8])
    case other

    init(from decoder: any Decoder) throws {
        let container = try decoder.singleValueContainer()
        if let text = try? container.decode(String.self) {
            self = .text(text)
        } else if let bytes = try? container.decode([UInt8].self) {
            self = .bytes(bytes)
        } else {
            self = .other
        }
    }

    /// The value as text, if it is one (bytes that are valid UTF-8 count).
    var text: String? {
        switch self {
        case .text(let text): text
        case .bytes(let bytes): String(validating: bytes, as: UTF8.self)
        case .other: nil
        }
    }
}
