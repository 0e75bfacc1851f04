import FleetCore
import FleetReplay
import Foundation
import Testing

/// The built `wearfleetctl replay`, run on a file of `journalctl -o json` lines: it prints what
/// `ReplayReport` makes of them, reports bad lines on standard error and exits as documented.
@Suite("wearfleetctl replay")
struct WearfleetctlReplayTests {
    static let strap = DeviceID(address: BluetoothAddress("AA:BB:CC:00:50:01")!)

    /// A short recorded run: the fleet starts a pinned strap, which hears bluetoothd and a
    /// powered adapter; with the daemon's other entries and two damaged lines among them.
    static func journalLines() throws -> [String] {
        let configuration = FleetRuntimeConfiguration(
            pinned: [FleetRuntimeConfiguration.PinnedDevice(id: strap, className: "strap")], classes: ["strap": DeviceStateMachine.Configuration()])
        var fleet = FleetStateMachine(configuration: configuration, now: .zero, seed: 7)
        var records = [RecordedInput(sequence: 0, now: .zero, kind: .fleetStarted(configuration, seed: 7))]
        records.append(RecordedInput(sequence: 1, now: .zero, kind: .fleetInput(.start)))
        var created: (machine: DeviceStateMachine, seed: UInt64)?
        for case .createDevice(let machine, let seed) in fleet.handle(.start, now: .zero) { created = (machine, seed) }
        var (machine, seed) = try #require(created)
        records.append(RecordedInput(sequence: 0, now: .zero, kind: .deviceCreated(strap, seed: seed)))
        var random = SeededRandom(seed: seed)
        let events: [DeviceEvent] = [.bluetoothdAppeared, .adapterPowered(AdapterID("hci0")), .policyUpdated(wanted: true)]
        for (index, event) in events.enumerated() {
            let now = MonotonicInstant(nanoseconds: Int64(index + 1) * 1_000_000_000)
            let effects = machine.reduce(event, now: now, random: &random)
            records.append(RecordedInput(sequence: UInt64(index + 1), now: now, kind: .deviceEvent(strap, event, effects: effects)))
        }
        var lines = [#"{"MESSAGE":"wearfleetd started","PRIORITY":"5"}"#, "garbage"]
        for record in records {
            let fields = ["MESSAGE": "recorded input", "WEARFLEET_INPUT": try record.json(), "WEARFLEET_RUN": "0000000000000007"]
            lines.append(String(decoding: try JSONEncoder().encode(fields), as: UTF8.self))
        }
        lines.append(#"{"WEARFLEET_INPUT":null}"#)
        return lines
    }

    @Test func replaysAFileAndReportsItsBadLines() async throws {
        let lines = try Self.journalLines()
        let file = FileManager.default.temporaryDirectory.appendingPathComponent("wearfleet-replay-\(UUID().uuidString).json")
        try lines.joined(separator: "\n").write(to: file, atomically: true, encoding: .utf8)
        defer { try? FileManager.default.removeItem(at: file) }
        var reader = JournalRecordReader()
        for line in lines { reader.read(line: line) }
        let expected = ReplayReport(reader, options: ReplayReport.Options())
        #expect(!expected.output.isEmpty)

        let result = try await Commands.run(Commands.wearfleetctl, ["replay", file.path])
        #expect(result.status == 0, "\(result.errors)")
        #expect(result.output == expected.output.joined(separator: "\n"))
        #expect(result.errors.contains("wearfleetctl: skipped line 2: not a journal entry in JSON"), "\(result.errors)")
        #expect(result.errors.contains("--all"), "a null field says how to keep it: \(result.errors)")
        #expect(result.errors.hasSuffix("wearfleetctl: 2 bad lines skipped"), "\(result.errors)")

        let device = try await Commands.run(Commands.wearfleetctl, ["replay", "--json", "--device", "AA:BB:CC:00:50:01", file.path])
        #expect(device.status == 0)
        #expect(device.output.split(separator: "\n").count == expected.output.count)
        #expect(device.output.hasPrefix("{"))
    }

    @Test func nothingRecordedBadUsageAndAMissingFileHaveTheirExitCodes() async throws {
        let empty = FileManager.default.temporaryDirectory.appendingPathComponent("wearfleet-replay-\(UUID().uuidString).json")
        try "{\"MESSAGE\":\"hello\"}\n".write(to: empty, atomically: true, encoding: .utf8)
        defer { try? FileManager.default.removeItem(at: empty) }
        #expect(try await Commands.run(Commands.wearfleetctl, ["replay", empty.path]).status == ReplayReport.ExitCode.nothingRecorded)
        #expect(try await Commands.run(Commands.wearfleetctl, ["replay", "--device", "strap-1", empty.path]).status == 2)
        let missing = try await Commands.run(Commands.wearfleetctl, ["replay", "/nonexistent/journal.json"])
        #expect(missing.status == 1)
        #expect(missing.errors == "wearfleetctl: cannot read /nonexistent/journal.json")
    }
}
