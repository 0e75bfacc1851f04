import FleetCore
import FoundationEssentials

/// One input of the fleet's or a device's machine, as the daemon recorded it in the journal
/// (with `log_level = "debug"`, or `WEARFLEET_RECORD_INPUTS=1`): enough to re-run the pure
/// machines exactly (`Replay`).
///
/// A run starts with `.fleetStarted` (the configuration and the seed the fleet machine was made
/// with). The fleet's inputs are numbered from 1 in the order they were applied; each device
/// machine's life starts with `.deviceCreated` (sequence 0) and numbers its events from 1.
/// A device's events carry the effects its machine returned, so a replay can tell where it
/// would have decided differently.
public struct RecordedInput: Sendable, Hashable, Codable {
    public enum Kind: Sendable, Hashable, Codable {
        /// The fleet machine was made with this configuration and seed.
        case fleetStarted(FleetRuntimeConfiguration, seed: UInt64)
        /// The fleet machine was handed this input.
        case fleetInput(FleetStateMachine.Input)
        /// A device machine the fleet created started running with this seed.
        case deviceCreated(DeviceID, seed: UInt64)
        /// A device machine was handed this event and returned these effects.
        case deviceEvent(DeviceID, DeviceEvent, effects: [DeviceEffect])
        /// A device machine took a reloaded configuration.
        case deviceReconfigured(DeviceID, DeviceStateMachine.Configuration, ReconnectPolicy)
    }

    /// The input's place in its machine's sequence.
    public var sequence: UInt64
    /// When it was applied, on the daemon's monotonic clock.
    public var now: MonotonicInstant
    public var kind: Kind

    public init(sequence: UInt64, now: MonotonicInstant, kind: Kind) {
        self.sequence = sequence
        self.now = now
        self.kind = kind
    }

    /// The device whose machine took the input; nil for the fleet machine.
    public var device: DeviceID? {
        switch kind {
        case .fleetStarted, .fleetInput: nil
        case .deviceCreated(let id, _), .deviceEvent(let id, _, _), .deviceReconfigured(let id, _, _): id
        }
    }

    /// What `WEARFLEET_MACHINE` says: `fleet`, or the device's identity as recorded.
    public var machineName: String {
        guard let device else { return "fleet" }
        return device.addressType == .public ? device.address.description : "\(device.address)/\(device.addressType.rawValue)"
    }

    // MARK: - JSON

    /// The record as one line of JSON (`WEARFLEET_INPUT`).
    public func json() throws -> String {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        return String(decoding: try encoder.encode(self), as: UTF8.self)
    }

    /// Reads a record written by `json()`; throws a `DecodingError` for anything else.
    public init(json: String) throws {
        self = try JSONDecoder().decode(RecordedInput.self, from: Data(json.utf8))
    }
}

/// The log metadata keys a recorded input travels under. The journal handler upper-cases them
/// into journal fields (`wearfleet_input` → `WEARFLEET_INPUT`), which is how `journalctl -o json`
/// prints them and `JournalRecordReader` looks for them.
public enum RecordingField {
    /// The record's JSON (`RecordedInput.json()`).
    public static let input = "wearfleet_input"
    /// Which daemon run the record belongs to: the fleet seed, 16 hex digits.
    public static let run = "wearfleet_run"
    /// `fleet`, or the device's address: for people filtering with journalctl.
    public static let machine = "wearfleet_machine"
    /// The record's sequence number, likewise.
    public static let sequence = "wearfleet_seq"

    /// The journal field a metadata key becomes.
    public static func journalName(_ key: String) -> String { key.uppercased() }

    /// The run identifier of a fleet made with `seed`.
    public static func runIdentifier(seed: UInt64) -> String {
        let digits = String(seed, radix: 16)
        return String(repeating: "0", count: max(0, 16 - digits.count)) + digits
    }
}
