import BlueZSimulator
import Fleet
import FleetCore
import FleetReplay
import Foundation
import Logging
import Synchronization
import Testing
import TestSupport

/// A chaos run against the simulated bluetoothd, recorded at debug level and replayed: the pure
/// machines, re-run from the record alone, go through the very states the live fleet went
/// through and return the very effects the live device machines returned.
@Suite("Replay of a recorded chaos run")
struct FleetReplaySimulatorTests {
    static let strapA = "AA:BB:CC:00:40:01"
    static let strapB = "AA:BB:CC:00:40:02"

    @Test func aChaosRunReplaysToTheSameStatesAndEffects() async throws {
        let journal = CapturedJournal()
        let events = ObservedFleetEvents()
        let fleet = try await Self.startChaosFleet(journal: journal, events: events)
        try await fleet.waitForStatus("both straps ready") { $0.pinnedReady == 2 }

        // Chaos: failing connects, links that keep dropping, a dropped link, an adapter power
        // cycle and a bluetoothd restart, on top of one another.
        try await fleet.simulator.apply(FaultCommand(.connectFailure, device: Self.strapA, probability: 0.5))
        try await fleet.simulator.apply(FaultCommand(.linkLoss, seconds: 0.4))
        try await Task.sleep(for: .milliseconds(700))
        try await fleet.simulator.apply(FaultCommand(.dropLink, device: Self.strapB))
        try await fleet.simulator.apply(FaultCommand(.adapterPower, adapter: "hci0", powered: false))
        try await Task.sleep(for: .milliseconds(300))
        try await fleet.simulator.apply(FaultCommand(.adapterPower, adapter: "hci0", powered: true))
        try await Task.sleep(for: .milliseconds(700))
        try await fleet.simulator.apply(FaultCommand(.restart, seconds: 0.3))
        try await Task.sleep(for: .milliseconds(1_200))
        try await fleet.simulator.apply(FaultCommand(.clear))
        try await fleet.simulator.apply(FaultCommand(.linkLoss, seconds: 0))
        try await fleet.waitForStatus("both straps ready after the chaos") { $0.pinnedReady == 2 }
        try await Self.waitUntilQuiet(journal: journal, events: events)

        let lines = journal.journalctlJSONLines()
        let live = events.all
        await fleet.stop()

        var reader = JournalRecordReader()
        for line in lines { reader.read(line: line) }
        #expect(reader.badLineCount == 0, "\(reader.badLines)")
        let runs = Replay.runs(reader.entries)
        try #require(runs.count == 1, "one run: \(runs.map(\.run))")
        let replay = Replay(run: runs[0].run, records: runs[0].records, keepingSteps: true)
        #expect(replay.problems.isEmpty, "\(replay.problems)")

        // The fleet machine, re-run from its record, publishes exactly what the live one did.
        let replayedEvents = replay.fleetSteps.flatMap { step in
            step.actions.compactMap { action -> FleetEvent? in if case .publish(let event) = action { event } else { nil } }
        }
        #expect(replayedEvents == live, "the replayed fleet publishes the live fleet's events")

        // Each device machine, re-run from its record, goes through the live states in order
        // (the chaos did make it go through some) and returns the recorded effects at each event.
        for address in [Self.strapA, Self.strapB] {
            let id = try FleetSimulatorFixture.id(address)
            let liveChanges = live.compactMap { event -> [String]? in
                guard case .lifecycle(id, .stateChanged(let from, let to, let session, let cause), _, _) = event else { return nil }
                return ["\(from)", "\(to)", "\(session)", "\(cause.map(\.rawValue) ?? "-")"]
            }
            let replayedChanges = replay.stateChanges.filter { $0.device == id }.map {
                ["\($0.from)", "\($0.to)", "\($0.session)", "\($0.cause.map(\.rawValue) ?? "-")"]
            }
            #expect(liveChanges.count > 6, "\(address) went through the chaos: \(liveChanges)")
            #expect(replayedChanges == liveChanges, "\(address): the replayed states are the live states")

            let recordedEffects = reader.entries.compactMap { entry -> [DeviceEffect]? in
                guard case .deviceEvent(id, _, let effects) = entry.record.kind else { return nil }
                return effects
            }
            let replayedEffects = replay.deviceSteps.filter { $0.device == id }.map(\.effects)
            #expect(!recordedEffects.isEmpty)
            #expect(replayedEffects == recordedEffects, "\(address): the replayed effects are the live effects")
        }
        #expect(replay.divergences.isEmpty, "\(replay.divergences)")
        #expect(replay.divergentEvents == 0)
        #expect(replay.deviceEventsReplayed == reader.entries.filter { if case .deviceEvent = $0.record.kind { true } else { false } }.count)
    }

    @Test func atInfoLevelNothingIsRecorded() async throws {
        let journal = CapturedJournal()
        let fleet = try await Self.startChaosFleet(journal: journal, events: ObservedFleetEvents(), level: .info)
        try await fleet.waitForStatus("both straps ready") { $0.pinnedReady == 2 }
        await fleet.stop()
        #expect(journal.recordCount == 0)
        #expect(journal.entryCount > 0, "the fleet did log at info")
    }

    // MARK: - Fixture

    static func startChaosFleet(
        journal: CapturedJournal, events: ObservedFleetEvents, level: Logger.Level = .debug
    ) async throws -> FleetSimulatorFixture {
        let scenario = Scenario(
            seed: 41, adapters: [AdapterSpec(name: "hci0", slots: 5)],
            devices: [strapA, strapB].map { DeviceSpec(kind: .heartRateStrap, address: $0, addressType: "public", bonded: true) })
        var reconnect = ReconnectPolicy()
        reconnect.baseDelay = .milliseconds(50)
        reconnect.maxDelay = .milliseconds(300)
        reconnect.budgets = [:]
        let configuration = FleetRuntimeConfiguration(
            pinned: try [strapA, strapB].map { FleetRuntimeConfiguration.PinnedDevice(id: try FleetSimulatorFixture.id($0), className: "strap") },
            classes: ["strap": FleetSimulatorFixture.strapClass()], pool: PoolConfiguration(maxConnections: 4), reconnect: reconnect)
        var logger = Logger(label: "fleet-replay-test") { _ in CapturingLogHandler(journal: journal) }
        logger.logLevel = level
        return try await FleetSimulatorFixture.start(scenario, configuration, seed: 0x5EED_0041, logger: logger, observers: [events])
    }

    /// Waits until neither the record nor the fleet's events have grown for a while: every input
    /// applied, every output handed back.
    static func waitUntilQuiet(journal: CapturedJournal, events: ObservedFleetEvents) async throws {
        try await withTimeout(.seconds(10), "the fleet to be quiet") {
            var last = (-1, -1)
            while true {
                let now = (journal.recordCount, events.all.count)
                if now == last { return }
                last = now
                try await Task.sleep(for: .milliseconds(400))
            }
        }
    }
}

// MARK: - An in-memory journal

/// Log entries kept in memory as journald would keep their fields.
final class CapturedJournal: Sendable {
    private let entries = Mutex<[[String: String]]>([])

    func append(_ fields: [String: String]) { entries.withLock { $0.append(fields) } }

    var entryCount: Int { entries.withLock { $0.count } }
    var recordCount: Int {
        entries.withLock { $0.filter { $0[RecordingField.journalName(RecordingField.input)] != nil }.count }
    }

    /// The entries as `journalctl -o json` prints them: one JSON object per line.
    func journalctlJSONLines() -> [String] {
        let encoder = JSONEncoder()
        encoder.outputFormatting = .sortedKeys
        return entries.withLock { $0 }.compactMap { fields in
            (try? encoder.encode(fields)).map { String(decoding: $0, as: UTF8.self) }
        }
    }
}

/// A swift-log handler that keeps what the journald handler would send: `MESSAGE`, `PRIORITY`
/// and the metadata as upper-cased fields.
struct CapturingLogHandler: LogHandler {
    let journal: CapturedJournal
    var metadata: Logger.Metadata = [:]
    var logLevel: Logger.Level = .info

    subscript(metadataKey key: String) -> Logger.Metadata.Value? {
        get { metadata[key] }
        set { metadata[key] = newValue }
    }

    func log(event: LogEvent) {
        var fields = ["MESSAGE": "\(event.message)", "PRIORITY": "\(event.level)", "__CURSOR": "s=\(journal.entryCount)"]
        for (key, value) in metadata.merging(event.metadata ?? [:], uniquingKeysWith: { $1 }) {
            fields[key.uppercased().replacingOccurrences(of: ".", with: "_")] = "\(value)"
        }
        journal.append(fields)
    }
}

/// Every fleet event, in the order the live fleet published it.
final class ObservedFleetEvents: FleetObserver {
    private let events = Mutex<[FleetEvent]>([])

    func observe(_ event: FleetEvent) { events.withLock { $0.append(event) } }

    var all: [FleetEvent] { events.withLock { $0 } }
}
