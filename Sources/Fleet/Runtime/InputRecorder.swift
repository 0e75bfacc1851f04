import FleetCore
import FleetReplay
import Glibc
import Logging

/// Records every input of the fleet machine in the journal, so that `wearfleetctl replay` can
/// re-run the pure machines (`Replay`) and print the same state sequence.
///
/// Recording is on when the logger logs at `debug` (`log_level = "debug"`) or when the daemon's
/// environment has `WEARFLEET_RECORD_INPUTS=1`; entries are `debug` entries with the record's
/// JSON in `WEARFLEET_INPUT` (see `RecordingField`). Off, it costs one branch per input: nothing
/// is encoded. The executor owns one (`FleetOrchestrator.apply`), and hands each device actor
/// its own `DeviceInputRecorder`.
struct InputRecorder: Sendable {
    /// The daemon's logger, at `debug` and with the run's identifier; nil when not recording.
    private let logger: Logger?
    private var sequence: UInt64 = 0

    /// The environment variable that turns recording on at any log level.
    static let environmentSwitch = "WEARFLEET_RECORD_INPUTS"

    /// Records the fleet machine's start (its configuration and seed), when recording.
    init(logger: Logger, configuration: FleetRuntimeConfiguration, seed: UInt64, now: MonotonicInstant) {
        guard logger.logLevel <= .debug || Self.switchedOn else {
            self.logger = nil
            return
        }
        var recording = logger
        recording.logLevel = .debug
        recording[metadataKey: RecordingField.run] = "\(RecordingField.runIdentifier(seed: seed))"
        self.logger = recording
        Self.log(RecordedInput(sequence: 0, now: now, kind: .fleetStarted(configuration, seed: seed)), to: recording)
    }

    /// Records a fleet input, numbered in the order inputs are applied.
    mutating func record(_ input: FleetStateMachine.Input, now: MonotonicInstant) {
        guard let logger else { return }
        sequence += 1
        Self.log(RecordedInput(sequence: sequence, now: now, kind: .fleetInput(input)), to: logger)
    }

    /// A recorder for a device machine the fleet just created with `seed`; nil when not recording.
    func device(_ device: DeviceID, seed: UInt64, now: MonotonicInstant) -> DeviceInputRecorder? {
        guard let logger else { return nil }
        return DeviceInputRecorder(logger: logger, device: device, seed: seed, now: now)
    }

    private static var switchedOn: Bool {
        guard let value = getenv(environmentSwitch) else { return false }
        return String(cString: value) == "1"
    }

    /// One journal entry: `MESSAGE` says what it is, the fields carry the record.
    fileprivate static func log(_ record: RecordedInput, to logger: Logger) {
        do {
            let json = try record.json()
            logger.debug("recorded input", metadata: [
                RecordingField.input: "\(json)", RecordingField.machine: "\(record.machineName)",
                RecordingField.sequence: "\(record.sequence)",
            ])
        } catch {
            // A value JSON cannot carry (a non-finite number in a configuration): the replay
            // will report the gap in the sequence.
            logger.warning("an input could not be recorded", metadata: [
                RecordingField.machine: "\(record.machineName)", RecordingField.sequence: "\(record.sequence)", "error": "\(error)",
            ])
        }
    }
}

/// Records every event a device actor feeds its machine, with the effects the machine returned;
/// made by `InputRecorder.device` only while recording, so a device actor without one records
/// nothing.
public struct DeviceInputRecorder: Sendable {
    private let logger: Logger
    private let device: DeviceID
    private var sequence: UInt64 = 0

    fileprivate init(logger: Logger, device: DeviceID, seed: UInt64, now: MonotonicInstant) {
        self.logger = logger
        self.device = device
        InputRecorder.log(RecordedInput(sequence: 0, now: now, kind: .deviceCreated(device, seed: seed)), to: logger)
    }

    mutating func record(_ event: DeviceEvent, now: MonotonicInstant, effects: [DeviceEffect]) {
        sequence += 1
        InputRecorder.log(RecordedInput(sequence: sequence, now: now, kind: .deviceEvent(device, event, effects: effects)), to: logger)
    }

    mutating func recordReconfiguration(
        _ configuration: DeviceStateMachine.Configuration, reconnectPolicy: ReconnectPolicy, now: MonotonicInstant
    ) {
        sequence += 1
        InputRecorder.log(
            RecordedInput(sequence: sequence, now: now, kind: .deviceReconfigured(device, configuration, reconnectPolicy)), to: logger)
    }
}
