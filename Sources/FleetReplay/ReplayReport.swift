import FleetCore
import FoundationEssentials

/// What `wearfleetctl replay` prints for what it read: the replayed state changes (and, when
/// asked, every step with its effects) on standard output, and on standard error what was
/// skipped, missing or different. Pure, so the command is argument parsing and I/O only.
public struct ReplayReport: Sendable {
    /// `wearfleetctl replay`'s exit codes.
    public enum ExitCode {
        /// Replayed; every device machine returned the recorded effects.
        public static let replayed: Int32 = 0
        /// Replayed, but a device machine decided differently from the record (this build's
        /// machines differ from the recording daemon's, or the record is damaged).
        public static let diverged: Int32 = 3
        /// No recorded input in the input at all (EX_DATAERR).
        public static let nothingRecorded: Int32 = 65
    }

    /// What to print.
    public struct Options: Sendable {
        /// Only this device's lines (either address type).
        public var device: BluetoothAddress?
        public var json: Bool
        /// Every fleet input and device event with the actions and effects the machines returned.
        public var steps: Bool

        public init(device: BluetoothAddress? = nil, json: Bool = false, steps: Bool = false) {
            self.device = device
            self.json = json
            self.steps = steps
        }
    }

    public private(set) var output: [String] = []
    public private(set) var diagnostics: [String] = []
    public private(set) var exitCode = ExitCode.replayed

    public init(_ reader: JournalRecordReader, options: Options) {
        for bad in reader.badLines { diagnostics.append("skipped \(bad)") }
        if reader.badLineCount > reader.badLines.count {
            diagnostics.append("skipped \(reader.badLineCount - reader.badLines.count) more bad lines")
        }
        let runs = Replay.runs(reader.entries)
        guard !runs.isEmpty else {
            diagnostics.append(
                "no recorded inputs among \(reader.otherEntries) journal entries (\(reader.badLineCount) bad lines): record with "
                    + "log_level = \"debug\" or WEARFLEET_RECORD_INPUTS=1, and read with journalctl -o json --all")
            exitCode = ExitCode.nothingRecorded
            return
        }
        for (run, records) in runs {
            let replay = Replay(run: run, records: records, keepingSteps: options.steps)
            diagnostics.append(
                "run \(run): \(records.count) records, \(replay.fleetInputsReplayed) fleet inputs and "
                    + "\(replay.deviceEventsReplayed) device events replayed, \(replay.stateChanges.count) state changes")
            for problem in replay.problems { diagnostics.append("run \(run): \(problem)") }
            for divergence in replay.divergences { diagnostics.append("run \(run): diverged at \(divergence)") }
            if replay.divergentEvents > 0 {
                diagnostics.append("run \(run): \(replay.divergentEvents) device events gave other effects than recorded")
                exitCode = ExitCode.diverged
            }
            list(replay, options: options)
        }
        if reader.badLineCount > 0 { diagnostics.append("\(reader.badLineCount) bad lines skipped") }
    }

    private mutating func list(_ replay: Replay, options: Options) {
        let wanted: (DeviceID) -> Bool = { id in options.device.map { $0 == id.address } ?? true }
        guard options.steps else {
            for change in replay.stateChanges where wanted(change.device) {
                output.append(options.json ? Self.json(change, run: replay.run) : change.line)
            }
            return
        }
        // Steps in time order: the fleet's (unless one device is asked for) and the devices'.
        var lines: [(at: MonotonicInstant, order: Int, text: String)] = []
        if options.device == nil {
            for step in replay.fleetSteps {
                let text = options.json ? Self.json(step, run: replay.run) : Self.line(step)
                lines.append((step.now, lines.count, text))
            }
        }
        for step in replay.deviceSteps where wanted(step.device) {
            let text = options.json ? Self.json(step, run: replay.run) : Self.line(step)
            lines.append((step.now, lines.count, text))
        }
        output += lines.sorted { ($0.at, $0.order) < ($1.at, $1.order) }.map(\.text)
    }

    // MARK: - Lines

    static func line(_ step: Replay.FleetStep) -> String {
        "[\(Replay.StateChange.seconds(step.now))] fleet #\(step.sequence) \(step.input) → \(step.actions.map(describe))"
    }

    static func line(_ step: Replay.DeviceStep) -> String {
        "[\(Replay.StateChange.seconds(step.now))] \(step.device) #\(step.sequence) \(step.event) → \(step.effects)"
    }

    /// An action as a short text: a created machine by its device and seed, not its whole state.
    static func describe(_ action: FleetStateMachine.Action) -> String {
        if case .createDevice(let machine, let seed) = action { return "createDevice(\(machine.device), seed: \(seed))" }
        return "\(action)"
    }

    // MARK: - JSON lines

    private struct FleetStepLine: Encodable {
        var run: String
        var at: MonotonicInstant
        var machine = "fleet"
        var sequence: UInt64
        var input: FleetStateMachine.Input
        var actions: [String]
    }

    private struct DeviceStepLine: Encodable {
        var run: String
        var at: MonotonicInstant
        var machine: DeviceID
        var sequence: UInt64
        var event: DeviceEvent
        var effects: [DeviceEffect]
    }

    static func json(_ change: Replay.StateChange, run: String) -> String {
        (try? change.json(run: run)) ?? "{}"
    }

    static func json(_ step: Replay.FleetStep, run: String) -> String {
        encode(FleetStepLine(run: run, at: step.now, sequence: step.sequence, input: step.input, actions: step.actions.map(describe)))
    }

    static func json(_ step: Replay.DeviceStep, run: String) -> String {
        encode(DeviceStepLine(run: run, at: step.now, machine: step.device, sequence: step.sequence, event: step.event, effects: step.effects))
    }

    /// Encodes a line; the values come from decoded records, so they encode again (a failure
    /// would print `{}` rather than stop the listing).
    private static func encode(_ line: some Encodable) -> String {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        return (try? encoder.encode(line)).map { String(decoding: $0, as: UTF8.self) } ?? "{}"
    }
}
