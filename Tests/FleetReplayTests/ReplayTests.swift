import FleetCore
import FleetReplay
import Testing

/// `Replay` over records made by a small synchronous executor of the pure machines (what
/// `FleetOrchestrator` and `DeviceActor` record, without BlueZ): the same states come out, and
/// what is missing or different is reported, never trapped on.
@Suite("Replay of recorded inputs")
struct ReplayTests {
    static let strap = DeviceID(address: BluetoothAddress("AA:BB:CC:00:00:01")!)
    static let hci0 = AdapterID("hci0")

    /// Records a pinned strap that is found, connects, and loses its link twice.
    static func recordedRun() -> (records: [RecordedInput], states: [DeviceState]) {
        var reconnect = ReconnectPolicy()
        reconnect.baseDelay = .milliseconds(100)
        let configuration = FleetRuntimeConfiguration(
            pinned: [FleetRuntimeConfiguration.PinnedDevice(id: strap, className: "strap")],
            classes: ["strap": DeviceStateMachine.Configuration()], reconnect: reconnect)
        var executor = RecordingExecutor(configuration: configuration, seed: 0xC0FFEE)
        let object = FleetStateMachine.DeviceObject(adapter: hci0, name: "Strap")
        var linked = object
        linked.connected = true
        executor.apply(.start)
        executor.apply(.adapterChanged(hci0, powered: true))
        executor.apply(.bluetoothdAppeared(held: [strap], adapters: [hci0]))
        executor.apply(.started)
        executor.apply(.device(strap, .deviceFound(adapter: hci0), objects: [object]))
        for loss in 0..<2 {
            executor.apply(.device(strap, .connected, objects: [linked]))
            executor.apply(.device(strap, .servicesResolved(services: [], characteristics: []), objects: [linked]))
            executor.apply(.device(strap, .disconnected(DeviceEvent.Failure(name: "org.bluez.Reason.Timeout")), objects: [object]))
            executor.advance(by: .seconds(loss + 1))
            executor.fireTimers()
        }
        return (executor.records, executor.states)
    }

    @Test func aReplayGoesThroughTheRecordedStates() throws {
        let (records, states) = Self.recordedRun()
        #expect(states.contains { if case .backingOff = $0 { true } else { false } }, "the run backed off: \(states)")
        let replay = Replay(run: "r", records: records, keepingSteps: true)
        #expect(replay.problems.isEmpty, "\(replay.problems)")
        #expect(replay.divergences.isEmpty, "\(replay.divergences)")
        #expect(replay.stateChanges.map(\.to) == states)
        #expect(replay.stateChanges.first?.from == .idle)
        #expect(replay.fleetInputsReplayed == records.filter { if case .fleetInput = $0.kind { true } else { false } }.count)
        #expect(replay.deviceSteps.count == replay.deviceEventsReplayed)
        // The same records always give the same outcome.
        #expect(Replay(run: "r", records: records).stateChanges == replay.stateChanges)
    }

    @Test func aDeviceThatDecidesDifferentlyIsReportedWhereItFirstDid() throws {
        var records = Self.recordedRun().records
        let index = try #require(records.lastIndex { if case .deviceEvent = $0.kind { true } else { false } })
        guard case .deviceEvent(let id, let event, _) = records[index].kind else { return }
        records[index].kind = .deviceEvent(id, event, effects: [.disconnect])
        let replay = Replay(run: "r", records: records)
        #expect(replay.divergences.count == 1)
        #expect(replay.divergences.first?.sequence == records[index].sequence)
        #expect(replay.divergences.first?.recorded == [.disconnect])
        #expect(replay.divergentEvents == 1)
    }

    @Test func missingInputsAreReportedAndTheRestIsReplayed() throws {
        var records = Self.recordedRun().records
        let fleetInputs = records.indices.filter { if case .fleetInput = records[$0].kind { true } else { false } }
        records.remove(at: fleetInputs[fleetInputs.count - 3])
        let replay = Replay(run: "r", records: records)
        #expect(replay.problems.contains { $0.hasPrefix("fleet: input") && $0.hasSuffix("is missing") }, "\(replay.problems)")
        #expect(!replay.stateChanges.isEmpty)
    }

    @Test func withoutTheRunsStartNothingIsReplayed() {
        let records = Self.recordedRun().records.filter { if case .fleetStarted = $0.kind { false } else { true } }
        let replay = Replay(run: "r", records: records)
        #expect(replay.stateChanges.isEmpty)
        #expect(replay.problems.contains { $0.contains("start") })
    }

    @Test func eventsBeforeAMachinesCreationAreSkippedAndCounted() {
        let records = Self.recordedRun().records.filter { if case .deviceCreated = $0.kind { false } else { true } }
        let replay = Replay(run: "r", records: records)
        #expect(replay.stateChanges.isEmpty)
        #expect(replay.problems.contains { $0.contains("before its machine's creation record") }, "\(replay.problems)")
    }

    @Test func aSeedThatDiffersFromTheFleetsIsReported() {
        let records = Self.recordedRun().records.map { record -> RecordedInput in
            guard case .deviceCreated(let id, let seed) = record.kind else { return record }
            return RecordedInput(sequence: record.sequence, now: record.now, kind: .deviceCreated(id, seed: seed &+ 1))
        }
        let replay = Replay(run: "r", records: records)
        #expect(replay.problems.contains { $0.contains("seed") }, "\(replay.problems)")
    }
}

/// The executor's recording half, synchronously: applies fleet inputs, runs device machines for
/// `.deliver`, hands their outputs back as fleet inputs, and records what the daemon records.
struct RecordingExecutor {
    private var fleet: FleetStateMachine
    private var devices: [DeviceID: (machine: DeviceStateMachine, random: SeededRandom, sequence: UInt64)] = [:]
    private var timers: [DeviceID: [DeviceStateMachine.TimerKind: (generation: UInt64, deadline: MonotonicInstant)]] = [:]
    private var queue: [FleetStateMachine.Input] = []
    private var fleetSequence: UInt64 = 0
    private(set) var now = MonotonicInstant(nanoseconds: 1_000_000_000)
    private(set) var records: [RecordedInput] = []
    private(set) var states: [DeviceState] = []

    init(configuration: FleetRuntimeConfiguration, seed: UInt64) {
        fleet = FleetStateMachine(configuration: configuration, now: now, seed: seed)
        records.append(RecordedInput(sequence: 0, now: now, kind: .fleetStarted(configuration, seed: seed)))
    }

    mutating func advance(by duration: Duration) { now = now + duration }

    /// Applies `input` and every input it leads to (device outputs, evaluations).
    mutating func apply(_ input: FleetStateMachine.Input) {
        queue.append(input)
        while !queue.isEmpty {
            let next = queue.removeFirst()
            fleetSequence += 1
            records.append(RecordedInput(sequence: fleetSequence, now: now, kind: .fleetInput(next)))
            for action in fleet.handle(next, now: now) { execute(action) }
        }
    }

    /// Fires every timer whose deadline has passed.
    mutating func fireTimers() {
        for (id, kinds) in timers.sorted(by: { $0.key < $1.key }) {
            for (kind, timer) in kinds.sorted(by: { $0.key.rawValue < $1.key.rawValue }) where timer.deadline <= now {
                timers[id]?[kind] = nil
                deliver(id, .timeout(kind, generation: timer.generation))
            }
        }
        apply(.evaluate)
    }

    private mutating func execute(_ action: FleetStateMachine.Action) {
        switch action {
        case .createDevice(let machine, let seed):
            devices[machine.device] = (machine, SeededRandom(seed: seed), 0)
            records.append(RecordedInput(sequence: 0, now: now, kind: .deviceCreated(machine.device, seed: seed)))
        case .deliver(let id, let event):
            deliver(id, event)
        case .requestEvaluation:
            queue.append(.evaluate)
        default:
            break
        }
    }

    private mutating func deliver(_ id: DeviceID, _ event: DeviceEvent) {
        guard var device = devices[id] else { return }
        let effects = device.machine.reduce(event, now: now, random: &device.random)
        device.sequence += 1
        devices[id] = device
        records.append(RecordedInput(sequence: device.sequence, now: now, kind: .deviceEvent(id, event, effects: effects)))
        for effect in effects {
            switch effect {
            case .requestAttempt: queue.append(.deviceOutput(.requestAttempt(id)))
            case .withdrawAttemptRequest: queue.append(.deviceOutput(.withdrawAttemptRequest(id)))
            case .attemptFinished(let adapter, let outcome): queue.append(.deviceOutput(.attemptFinished(id, adapter: adapter, outcome: outcome)))
            case .persist(let update): queue.append(.deviceOutput(.persist(id, update)))
            case .emit(let lifecycle):
                if case .stateChanged(_, let to, _, _) = lifecycle { states.append(to) }
                queue.append(.deviceOutput(.lifecycle(id, lifecycle)))
            case .scheduleTimer(let kind, let generation, let deadline): timers[id, default: [:]][kind] = (generation, deadline)
            case .cancelTimer(let kind): timers[id]?[kind] = nil
            default: break
            }
        }
    }
}
