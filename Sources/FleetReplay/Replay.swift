import FleetCore

/// One daemon run re-played from its recorded inputs: the fleet machine is made again from the
/// recorded configuration and seed and handed every recorded input with its recorded `now`;
/// each device machine is the one the replayed fleet machine creates (`.createDevice`), seeded
/// as recorded, and is handed its recorded events. Pure: no clock, no I/O, no randomness but
/// the recorded seeds.
///
/// Guarantees:
/// - The same records always give the same outcome.
/// - A device event whose replayed effects differ from the recorded ones is a `Divergence`
///   (the first of each device machine's life; later ones follow from it and are counted).
/// - Missing pieces (the run's start, a machine's creation, gaps in a sequence, seeds that do
///   not match) are `problems`; whatever can still be replayed is.
public struct Replay: Sendable {
    /// A device's state change, as its replayed machine emitted it.
    public struct StateChange: Sendable, Hashable {
        public var device: DeviceID
        public var at: MonotonicInstant
        public var from: DeviceState
        public var to: DeviceState
        public var session: UInt64
        public var cause: FailureClass?
    }

    /// One fleet input and the actions the replayed fleet machine returned.
    public struct FleetStep: Sendable {
        public var sequence: UInt64
        public var now: MonotonicInstant
        public var input: FleetStateMachine.Input
        public var actions: [FleetStateMachine.Action]
    }

    /// One device event and the effects the replayed device machine returned.
    public struct DeviceStep: Sendable, Hashable {
        public var device: DeviceID
        public var sequence: UInt64
        public var now: MonotonicInstant
        public var event: DeviceEvent
        public var effects: [DeviceEffect]
    }

    /// Where a device machine decided differently from the recorded run.
    public struct Divergence: Sendable, Hashable, CustomStringConvertible {
        public var device: DeviceID
        public var sequence: UInt64
        public var now: MonotonicInstant
        public var event: DeviceEvent
        public var recorded: [DeviceEffect]
        public var replayed: [DeviceEffect]

        public var description: String {
            "\(device) event \(sequence) at \(now) (\(event)): recorded \(recorded), replayed \(replayed)"
        }
    }

    public let run: String
    /// Every device's state changes, in time order (a device's own in its machine's order).
    public private(set) var stateChanges: [StateChange] = []
    /// Each fleet input with its actions, when asked to keep them.
    public private(set) var fleetSteps: [FleetStep] = []
    /// Each device event with its effects, in each device machine's order, when asked to keep them.
    public private(set) var deviceSteps: [DeviceStep] = []
    public private(set) var divergences: [Divergence] = []
    /// Device events whose replayed effects differ, the first of each life included.
    public private(set) var divergentEvents = 0
    public private(set) var problems: [String] = []
    public private(set) var fleetInputsReplayed = 0
    public private(set) var deviceEventsReplayed = 0

    /// Replays `records` (one run's, in the order they were read).
    /// `keepingSteps` keeps every fleet and device step (tests, `--effects`).
    public init(run: String, records: [RecordedInput], keepingSteps: Bool = false) {
        self.run = run
        let partition = Partition(records)
        problems += partition.problems
        guard let start = partition.start else {
            problems.append("the run's start (its configuration and seed) is not in the input, so nothing can be replayed")
            return
        }
        let created = replayFleet(start: start, inputs: partition.fleetInputs, keepingSteps: keepingSteps)
        var timeline: [(change: StateChange, order: Int)] = []
        for (device, lives) in partition.deviceLives {
            let machines = created[device] ?? []
            for (index, life) in lives.enumerated() {
                guard index < machines.count else {
                    problems.append("\(device): the fleet did not create a machine for its life \(index + 1) in the replay")
                    continue
                }
                replayDevice(life, machine: machines[index].machine, fleetSeed: machines[index].seed, keepingSteps: keepingSteps) {
                    timeline.append(($0, timeline.count))
                }
            }
        }
        stateChanges = timeline.sorted { ($0.change.at, $0.order) < ($1.change.at, $1.order) }.map(\.change)
    }

    // MARK: - Fleet

    /// Runs the fleet machine; returns the device machines it created, by device, in order.
    private mutating func replayFleet(
        start: (configuration: FleetRuntimeConfiguration, seed: UInt64, now: MonotonicInstant), inputs: [RecordedInput],
        keepingSteps: Bool
    ) -> [DeviceID: [(machine: DeviceStateMachine, seed: UInt64)]] {
        var fleet = FleetStateMachine(configuration: start.configuration, now: start.now, seed: start.seed)
        var created: [DeviceID: [(machine: DeviceStateMachine, seed: UInt64)]] = [:]
        for record in inputs {
            guard case .fleetInput(let input) = record.kind else { continue }
            let actions = fleet.handle(input, now: record.now)
            fleetInputsReplayed += 1
            for case .createDevice(let machine, let seed) in actions { created[machine.device, default: []].append((machine, seed)) }
            if keepingSteps { fleetSteps.append(FleetStep(sequence: record.sequence, now: record.now, input: input, actions: actions)) }
        }
        return created
    }

    // MARK: - Devices

    private mutating func replayDevice(
        _ life: DeviceLife, machine start: DeviceStateMachine, fleetSeed: UInt64, keepingSteps: Bool,
        stateChanged: (StateChange) -> Void
    ) {
        let device = start.device
        if life.seed != fleetSeed {
            problems.append("\(device): its actor recorded seed \(life.seed), the fleet machine gave \(fleetSeed); replaying with the recorded one")
        }
        var machine = start
        var random = SeededRandom(seed: life.seed)
        var diverged = false
        for record in life.records {
            switch record.kind {
            case .deviceEvent(_, let event, let recorded):
                let effects = machine.reduce(event, now: record.now, random: &random)
                deviceEventsReplayed += 1
                if effects != recorded {
                    divergentEvents += 1
                    if !diverged {
                        divergences.append(Divergence(
                            device: device, sequence: record.sequence, now: record.now, event: event, recorded: recorded, replayed: effects))
                        diverged = true
                    }
                }
                for case .emit(.stateChanged(let from, let to, let session, let cause)) in effects {
                    stateChanged(StateChange(device: device, at: record.now, from: from, to: to, session: session, cause: cause))
                }
                if keepingSteps {
                    deviceSteps.append(DeviceStep(device: device, sequence: record.sequence, now: record.now, event: event, effects: effects))
                }
            case .deviceReconfigured(_, let configuration, let reconnectPolicy):
                machine.reconfigure(configuration, reconnectPolicy: reconnectPolicy)
            case .fleetStarted, .fleetInput, .deviceCreated:
                continue
            }
        }
    }
}

// MARK: - Sorting records by machine

/// One device machine's life: from its creation to its retirement (or the end of the input).
private struct DeviceLife {
    var seed: UInt64
    var records: [RecordedInput] = []
    var lastSequence: UInt64 = 0
}

/// A run's records by machine, with what is missing.
private struct Partition {
    var start: (configuration: FleetRuntimeConfiguration, seed: UInt64, now: MonotonicInstant)?
    var fleetInputs: [RecordedInput] = []
    /// In the order each device first appears.
    var deviceLives: [(DeviceID, [DeviceLife])] = []
    var problems: [String] = []

    init(_ records: [RecordedInput]) {
        var lives: [DeviceID: [DeviceLife]] = [:]
        var deviceOrder: [DeviceID] = []
        var orphans: [DeviceID: Int] = [:]
        var lastFleetSequence: UInt64 = 0
        for record in records {
            switch record.kind {
            case .fleetStarted(let configuration, let seed):
                if start != nil { problems.append("the run starts more than once; using its first start") } else { start = (configuration, seed, record.now) }
            case .fleetInput:
                if let gap = Self.gap(after: lastFleetSequence, to: record.sequence) { problems.append("fleet: \(gap)") }
                lastFleetSequence = max(lastFleetSequence, record.sequence)
                fleetInputs.append(record)
            case .deviceCreated(let id, let seed):
                if lives[id] == nil { deviceOrder.append(id) }
                lives[id, default: []].append(DeviceLife(seed: seed))
            case .deviceEvent(let id, _, _), .deviceReconfigured(let id, _, _):
                guard var life = lives[id]?.popLast() else {
                    orphans[id, default: 0] += 1
                    continue
                }
                if let gap = Self.gap(after: life.lastSequence, to: record.sequence) { problems.append("\(id): \(gap)") }
                life.lastSequence = max(life.lastSequence, record.sequence)
                life.records.append(record)
                lives[id]?.append(life)
            }
        }
        deviceLives = deviceOrder.map { ($0, lives[$0] ?? []) }
        for (id, count) in orphans.sorted(by: { $0.key < $1.key }) {
            problems.append("\(id): \(count) events before its machine's creation record were skipped")
        }
    }

    /// Describes inputs missing between two sequence numbers (journald drops entries beyond its
    /// rate limit), or an input out of order.
    static func gap(after last: UInt64, to next: UInt64) -> String? {
        if next == last + 1 { return nil }
        if next <= last { return "input \(next) came after input \(last)" }
        return next == last + 2 ? "input \(last + 1) is missing" : "inputs \(last + 1)…\(next - 1) are missing"
    }
}

extension Replay {
    /// The records of several runs, split by run, in the order each run first appears.
    public static func runs(_ entries: [JournalRecordReader.Entry]) -> [(run: String, records: [RecordedInput])] {
        var order: [String] = []
        var byRun: [String: [RecordedInput]] = [:]
        for entry in entries {
            if byRun[entry.run] == nil { order.append(entry.run) }
            byRun[entry.run, default: []].append(entry.record)
        }
        return order.map { ($0, byRun[$0] ?? []) }
    }
}
