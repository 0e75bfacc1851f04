import FleetCore
import FleetReplay
import Foundation
import Testing

/// `wearfleetctl replay` reads whatever `journalctl -o json` prints: recorded inputs are kept,
/// other entries skipped, and bad lines counted with their line number, never a crash.
@Suite("Reading recorded inputs from journalctl -o json")
struct JournalRecordReaderTests {
    static let strap = DeviceID(address: BluetoothAddress("AA:BB:CC:00:00:01")!)

    /// One entry as journalctl prints it, with the recorder's fields.
    static func entryLine(_ record: RecordedInput, run: String = "00000000000000aa") throws -> String {
        let fields = [
            "__CURSOR": "s=1;i=2", "__MONOTONIC_TIMESTAMP": "123", "_PID": "77", "SYSLOG_IDENTIFIER": "wearfleetd",
            "PRIORITY": "7", "MESSAGE": "recorded input", "WEARFLEET_INPUT": try record.json(), "WEARFLEET_RUN": run,
            "WEARFLEET_MACHINE": record.machineName, "WEARFLEET_SEQ": "\(record.sequence)",
        ]
        return String(decoding: try JSONEncoder().encode(fields), as: UTF8.self)
    }

    static let start = RecordedInput(sequence: 0, now: .zero, kind: .fleetStarted(FleetRuntimeConfiguration(), seed: 0xAA))
    static let evaluate = RecordedInput(sequence: 1, now: MonotonicInstant(nanoseconds: 10), kind: .fleetInput(.evaluate))

    @Test func recordedInputsAreKeptAndOtherEntriesSkipped() throws {
        var reader = JournalRecordReader()
        reader.read(text: [
            try Self.entryLine(Self.start),
            #"{"__CURSOR":"s=1","MESSAGE":"device connecting → ready","DEVICE_ADDRESS":"AA:BB:CC:00:00:01","PRIORITY":"5"}"#,
            "",
            try Self.entryLine(Self.evaluate),
            #"{"MESSAGE":"another unit","_SYSTEMD_UNIT":"bluetooth.service"}"#,
        ].joined(separator: "\n"))
        #expect(reader.entries.map(\.record) == [Self.start, Self.evaluate])
        #expect(reader.entries.allSatisfy { $0.run == "00000000000000aa" })
        #expect(reader.otherEntries == 2)
        #expect(reader.badLineCount == 0)
    }

    /// `wearfleetd --log-format json` (a daemon not run under journald, the real-stack tier):
    /// the recorder's fields are the line's `metadata`, with the names they were logged with.
    @Test func linesOfTheDaemonsJSONLogFormatAreReadToo() throws {
        func logLine(_ record: RecordedInput) throws -> String {
            let metadata = [
                "wearfleet_input": try record.json(), "wearfleet_run": "00000000000000aa",
                "wearfleet_machine": record.machineName, "wearfleet_seq": "\(record.sequence)",
            ]
            let line: [String: Any] = [
                "time": "2026-11-29T17:15:42.418Z", "level": "debug", "message": "recorded input",
                "metadata": metadata, "source": "Fleet",
            ]
            return String(decoding: try JSONSerialization.data(withJSONObject: line), as: UTF8.self)
        }
        var reader = JournalRecordReader()
        reader.read(text: [
            try logLine(Self.start),
            #"{"time":"2026-11-29T17:15:43.000Z","level":"notice","message":"bluetoothd appeared","metadata":{"event":"bluetoothd_appeared"}}"#,
            try logLine(Self.evaluate),
        ].joined(separator: "\n"))
        #expect(reader.entries.map(\.record) == [Self.start, Self.evaluate])
        #expect(reader.entries.allSatisfy { $0.run == "00000000000000aa" })
        #expect(reader.otherEntries == 1)
        #expect(reader.badLineCount == 0)
    }

    @Test func badLinesAreCountedWithTheirLineNumberAndSkipped() throws {
        var reader = JournalRecordReader()
        let good = try Self.entryLine(Self.evaluate)
        let lines = [
            good,
            "not json at all",
            String(good.prefix(good.count / 2)),  // cut in the middle
            #"{"WEARFLEET_INPUT":null,"MESSAGE":"recorded input"}"#,  // too large for journalctl without --all
            #"{"WEARFLEET_INPUT":"{\"sequence\":1}"}"#,  // not a whole record
            #"{"WEARFLEET_INPUT":"{\"sequence\":-1,\"now\":0,\"kind\":{\"fleetInput\":{\"_0\":{\"evaluate\":{}}}}}"}"#,
            #"{"WEARFLEET_INPUT":17}"#,
            #"["an","array"]"#,
            #"{"WEARFLEET_INPUT":["a","b"]}"#,  // the field twice
            "\u{0}\u{1}\u{FFFD}",
            good,
        ]
        for line in lines { reader.read(line: line) }
        #expect(reader.entries.count == 2)
        #expect(reader.badLineCount == 9)
        #expect(reader.badLines.map(\.lineNumber) == Array(2...10))
        #expect(reader.badLines[2].reason.contains("--all"), "\(reader.badLines[2])")
        #expect(reader.badLines[3].reason.contains("\"now\""), "says what is missing: \(reader.badLines[3])")
    }

    @Test func aFieldPrintedAsBytesIsRead() throws {
        // journalctl prints a field that is not printable text as an array of byte values.
        let json = try Self.evaluate.json()
        let bytes = Array(json.utf8).map(String.init).joined(separator: ",")
        var reader = JournalRecordReader()
        reader.read(line: #"{"WEARFLEET_INPUT":[\#(bytes)],"WEARFLEET_RUN":"01"}"#)
        #expect(reader.entries == [JournalRecordReader.Entry(run: "01", record: Self.evaluate)])
    }

    @Test func onlyTheFirstBadLinesAreKeptButAllAreCounted() {
        var reader = JournalRecordReader()
        for _ in 0..<100 { reader.read(line: "garbage") }
        #expect(reader.badLineCount == 100)
        #expect(reader.badLines.count == JournalRecordReader.keptBadLines)
    }

    @Test func entriesSplitIntoRunsInTheOrderTheyAppear() throws {
        var reader = JournalRecordReader()
        for (record, run) in [(Self.start, "b"), (Self.start, "a"), (Self.evaluate, "b"), (Self.evaluate, "a")] {
            reader.read(line: try Self.entryLine(record, run: run))
        }
        let runs = Replay.runs(reader.entries)
        #expect(runs.map(\.run) == ["b", "a"])
        #expect(runs.map(\.records) == [[Self.start, Self.evaluate], [Self.start, Self.evaluate]])
    }
}
