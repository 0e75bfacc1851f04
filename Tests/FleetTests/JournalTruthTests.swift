import FleetCore
import Foundation
import Logging
import Testing
import TestSupport
@testable import Fleet
@testable import FleetState

/// What the journal says is true: sessions never mix runs, every device and value line names the
/// device fully, "state saved" means a file was written.
@Suite("Journal truth")
struct JournalTruthTests {
    static let strap = DeviceID(address: BluetoothAddress("C4:7A:20:00:00:01")!)
    static let hci1 = AdapterID("hci1")
    static let batteryLevel = "00002a19-0000-1000-8000-00805f9b34fb"

    static func string(_ value: Logger.Metadata.Value?) -> String? {
        if case .string(let text)? = value { text } else { nil }
    }

    // MARK: - Run numbers

    @Test func eachRunOfOneStateDirectoryGetsTheNextNumber() async throws {
        let directory = try TemporaryDirectory()
        var runs: [UInt64] = []
        for _ in 0..<3 {
            // A new store each time, as a restarted daemon has.
            let store = StateStoreFixture.store(in: directory)
            runs.append(try await store.beginRun().number)
        }
        #expect(runs == [1, 2, 3])
    }

    @Test func aDamagedRunCounterIsLoggedAndNoNumberItCountedIsUsedAgain() async throws {
        let directory = try TemporaryDirectory()
        try Data("garb\u{1}age\n".utf8).write(to: directory.url.appendingPathComponent(StateStore.runNumberFileName))
        let noon = Date(timeIntervalSince1970: 1_700_000_000)
        let start = try await StateStoreFixture.store(in: directory).beginRun(now: noon)
        #expect(start == StateStore.RunStart(number: 1_700_000_000, damagedCounter: "\"garb?age?\""))
        // It goes on counting from there.
        #expect(try await StateStoreFixture.store(in: directory).beginRun(now: noon).number == 1_700_000_001)
        // And the daemon says so.
        try Data("x".utf8).write(to: directory.url.appendingPathComponent(StateStore.runNumberFileName))
        let capture = LogCapture()
        let run = await StateStoreService.beginRun(StateStoreFixture.store(in: directory), logger: capture.logger(label: "test"))
        #expect(run > 1_700_000_001, "past what it counted (the time now)")
        let line = capture.entries.first { $0.event == "run_number_damaged" }
        #expect(line?.level == .warning && line?.metadata["found"] == "\"x\"" && line?.metadata["run"] == "\(run)")
    }

    @Test func aDirectoryThatTakesNoRunNumberStillGivesARunUnlikeAnyCounter() async throws {
        let directory = try TemporaryDirectory()
        let store = StateStore(directory: directory.url, logger: StateStoreFixture.logger, writer: FailingWriter())
        let capture = LogCapture()
        let run = await StateStoreService.beginRun(store, logger: capture.logger(label: "test"))
        #expect(run >= 1_000_000)
        #expect(capture.entries.map(\.event) == ["run_number_failed"])
    }

    // MARK: - Sessions and device fields

    @Test func sessionIDsNameTheRunAndEveryDeviceLineNamesTheDevice() throws {
        let capture = LogCapture()
        var log = FleetEventLog(logger: capture.logger(label: "test"), run: 7)
        log.record(.deviceAdded(FleetObservedDevice(id: Self.strap, name: "Strap 1", className: nil, pinned: true)))
        let context = FleetEvent.DeviceContext(name: "Strap 1", adapter: Self.hci1, pinned: true)
        log.record(.lifecycle(Self.strap, .stateChanged(from: .connecting(adapter: Self.hci1), to: .ready, session: 3, cause: nil), context: context, at: .zero))
        // A failure reported once the link is gone: the fleet no longer says which adapter.
        let unlinked = FleetEvent.DeviceContext(name: "Strap 1", adapter: nil, pinned: true)
        log.record(.lifecycle(Self.strap, .failed(.transient, error: nil, session: 3), context: unlinked, at: .zero))
        log.record(.writeFinished(Self.strap, failure: DeviceEvent.Failure(.failed, message: "write failed")))
        log.record(.evicted(Self.strap, adapter: Self.hci1, reason: .outranked))

        let lines = capture.entries
        #expect(lines.count == 4)
        for line in lines {
            #expect(Self.string(line.metadata["device_address"]) == "C4:7A:20:00:00:01", "\(line.message)")
            #expect(Self.string(line.metadata["device_name"]) == "Strap 1", "\(line.message)")
            #expect(Self.string(line.metadata["adapter"]) == "hci1", "\(line.message)")
            #expect(Self.string(line.metadata["session_id"]) == "7-3", "\(line.message)")
        }
    }

    /// A failure the fleet put down to the adapter or bluetoothd keeps its `failed` line; a
    /// second line says it no longer counts, and why, beside the `link_loss_cause` line.
    @Test func aWithdrawnFailureIsToldWithItsCause() throws {
        let capture = LogCapture()
        var log = FleetEventLog(logger: capture.logger(label: "test"), run: 7)
        log.record(.deviceAdded(FleetObservedDevice(id: Self.strap, name: "Strap 1", className: nil, pinned: true)))
        let context = FleetEvent.DeviceContext(name: "Strap 1", adapter: nil, pinned: true)
        log.record(.lifecycle(Self.strap, .failed(.transient, error: nil, session: 3), context: context, at: .zero))
        log.record(.linkLossExplained(Self.strap, adapter: Self.hci1, cause: .adapterPoweredOff, ago: .milliseconds(40)))
        let withdrawal = DeviceEffect.LifecycleEvent.failureWithdrawn(.transient, cause: .adapterPoweredOff, session: 3)
        log.record(.lifecycle(Self.strap, withdrawal, context: context, at: .zero))

        #expect(capture.entries.map(\.event) == ["failed", "link_loss_cause", "failure_withdrawn"])
        let withdrawn = try #require(capture.entries.last)
        #expect(withdrawn.level == .notice)
        #expect(withdrawn.message == "device failure withdrawn: its adapter powered off, not the device")
        #expect(Self.string(withdrawn.metadata["error_class"]) == "transient")
        #expect(Self.string(withdrawn.metadata["cause"]) == "adapter_powered_off")
        #expect(Self.string(withdrawn.metadata["session_id"]) == "7-3")
        #expect(Self.string(withdrawn.metadata["device_address"]) == "C4:7A:20:00:00:01")
    }

    @Test func theSameSessionInTwoRunsHasTwoIDs() {
        #expect(FleetOrchestrator.sessionID(run: 1, session: 1) != FleetOrchestrator.sessionID(run: 2, session: 1))
        #expect(FleetOrchestrator.sessionID(run: 12, session: 4) == "12-4")
    }

    @Test func valueLinesCarryTheDevicesNameAdapterAndSession() throws {
        let capture = LogCapture()
        let logger = capture.logger(label: "test", level: .info)
        let pipeline = ValuePipeline(logger: logger)
        var log = FleetEventLog(logger: logger, pipeline: pipeline, run: 2)
        log.record(.deviceAdded(FleetObservedDevice(id: Self.strap, name: "Strap 1", className: nil, pinned: true)))
        let context = FleetEvent.DeviceContext(name: "Strap 1", adapter: Self.hci1, pinned: true)
        log.record(.lifecycle(Self.strap, .stateChanged(from: .connecting(adapter: Self.hci1), to: .ready, session: 5, cause: nil), context: context, at: .zero))

        pipeline.ingest(device: Self.strap, characteristic: Self.batteryLevel, bytes: [80])
        let value = try #require(capture.entries.last)
        #expect(value.message.hasPrefix("first"))
        #expect(Self.string(value.metadata["device_name"]) == "Strap 1")
        #expect(Self.string(value.metadata["adapter"]) == "hci1")
        #expect(Self.string(value.metadata["session_id"]) == "2-5")
    }

    // MARK: - State saved

    @Test func stateSavedIsLoggedOnlyWhenTheFileWasWritten() async throws {
        let directory = try TemporaryDirectory()
        let store = StateStoreFixture.store(in: directory)
        _ = try await store.load()
        let capture = LogCapture()
        let logger = capture.logger(label: "test")

        await StateStoreService.save(store, directory: directory.url.path, logger: logger)
        #expect(capture.entries.map(\.event) == ["state_unchanged"], "nothing was pending, nothing was written")
        #expect(try directory.contents().isEmpty)

        await store.update(StateStoreFixture.device(1))
        await StateStoreService.save(store, directory: directory.url.path, logger: logger)
        #expect(capture.entries.filter { $0.event == "state_saved" }.count == 1)
        #expect(try directory.contents() == [StateStore.fileName])
    }
}
