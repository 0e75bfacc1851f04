import FleetCore
import FleetReplay
import Foundation
import Testing

/// What `wearfleetctl replay` prints for a recorded run read from `journalctl -o json` lines.
@Suite("wearfleetctl replay's report")
struct ReplayReportTests {
    /// The recorded run as journalctl prints it, with the daemon's other entries and damage.
    static func journal() throws -> JournalRecordReader {
        var reader = JournalRecordReader()
        reader.read(line: #"{"MESSAGE":"wearfleetd starting","PRIORITY":"6"}"#)
        for record in ReplayTests.recordedRun().records {
            reader.read(line: try JournalRecordReaderTests.entryLine(record, run: "00000000000000aa"))
        }
        reader.read(line: "{\"WEARFLEET_INPUT\":\"cut")
        return reader
    }

    @Test func printsOneLinePerStateChangeAndReportsTheRestOnStandardError() throws {
        let report = ReplayReport(try Self.journal(), options: ReplayReport.Options())
        let states = ReplayTests.recordedRun().states
        #expect(report.exitCode == ReplayReport.ExitCode.replayed)
        #expect(report.output.count == states.count)
        #expect(report.output.first?.hasPrefix("[     1.") == true, "monotonic seconds, as journalctl -o short-monotonic: \(report.output)")
        #expect(report.output.first?.contains("AA:BB:CC:00:00:01 idle → ") == true, "\(report.output)")
        #expect(report.output.contains { $0.contains("→ backingOff(") && $0.hasSuffix("cause transient") }, "\(report.output)")
        #expect(report.diagnostics.contains { $0.hasPrefix("run 00000000000000aa: ") && $0.contains("state changes") })
        #expect(report.diagnostics.contains { $0.hasPrefix("skipped line ") && $0.contains("not a journal entry") }, "\(report.diagnostics)")
        #expect(report.diagnostics.last == "1 bad lines skipped")
    }

    @Test func onlyTheAskedDevicesLines() throws {
        let other = ReplayReport(try Self.journal(), options: ReplayReport.Options(device: BluetoothAddress("AA:BB:CC:00:00:99")))
        #expect(other.output.isEmpty)
        let strap = ReplayReport(try Self.journal(), options: ReplayReport.Options(device: BluetoothAddress("aa:bb:cc:00:00:01")))
        #expect(strap.output == ReplayReport(try Self.journal(), options: ReplayReport.Options()).output)
    }

    @Test func jsonLinesCarryTheRunTheTimeAndTheStates() throws {
        let report = ReplayReport(try Self.journal(), options: ReplayReport.Options(json: true))
        let first = try #require(report.output.first)
        let object = try #require(try JSONSerialization.jsonObject(with: Data(first.utf8)) as? [String: Any])
        #expect(object["run"] as? String == "00000000000000aa")
        #expect(object["device"] as? String == "AA:BB:CC:00:00:01")
        #expect(object["from"] as? String == "idle")
        #expect(object["at"] is NSNumber)
        #expect(object["session"] is NSNumber)
    }

    @Test func stepsListEveryInputWithItsActionsAndEffects() throws {
        let report = ReplayReport(try Self.journal(), options: ReplayReport.Options(steps: true))
        #expect(report.output.contains { $0.contains("fleet #1 start → ") && $0.contains("createDevice(AA:BB:CC:00:00:01, seed: ") })
        #expect(report.output.contains { $0.contains("AA:BB:CC:00:00:01 #1 ") })
        let json = ReplayReport(try Self.journal(), options: ReplayReport.Options(json: true, steps: true))
        #expect(json.output.count == report.output.count)
        #expect(json.output.allSatisfy { (try? JSONSerialization.jsonObject(with: Data($0.utf8))) != nil })
    }

    @Test func aRecordTheMachinesDisagreeWithExitsThree() throws {
        var records = ReplayTests.recordedRun().records
        let index = try #require(records.lastIndex { if case .deviceEvent = $0.kind { true } else { false } })
        guard case .deviceEvent(let id, let event, _) = records[index].kind else { return }
        records[index].kind = .deviceEvent(id, event, effects: [])
        var reader = JournalRecordReader()
        for record in records { reader.read(line: try JournalRecordReaderTests.entryLine(record)) }
        let report = ReplayReport(reader, options: ReplayReport.Options())
        #expect(report.exitCode == ReplayReport.ExitCode.diverged)
        #expect(report.diagnostics.contains { $0.contains("diverged at AA:BB:CC:00:00:01 event \(records[index].sequence)") }, "\(report.diagnostics)")
    }

    @Test func nothingRecordedExitsWithDataError() {
        var reader = JournalRecordReader()
        reader.read(text: "{\"MESSAGE\":\"hello\"}\nnonsense\n")
        let report = ReplayReport(reader, options: ReplayReport.Options())
        #expect(report.exitCode == ReplayReport.ExitCode.nothingRecorded)
        #expect(report.output.isEmpty)
        #expect(report.diagnostics.last?.contains("log_level = \"debug\"") == true)
    }
}
