// The fleet's one way in: what another program, an operator or a test may ask of the fleet.
// Each command is an input of `FleetStateMachine` (its decision part) and, where it touches a
// device's GATT, an operation the runtime carries out after the machine accepted it.

/// A request to the fleet. Commands that are refused change nothing.
public enum FleetCommand: Sendable, Hashable, Codable {
    /// Pin a device at run time (merged with the configuration's pins; a reload keeps it).
    /// `objects` are BlueZ's objects for it now, so a device BlueZ knows is found at once.
    case pin(DeviceID, FleetPinOptions, objects: [FleetStateMachine.DeviceObject])
    /// Undo a run-time pin. A pin from the configuration file is refused.
    case unpin(DeviceID)
    /// Release the device's link and hold it (no attempts) until `reconnect` or `pin`.
    case disconnect(DeviceID)
    /// Pursue the device now: lift a hold, forget its backoff and a given-up budget.
    case reconnect(DeviceID)
    /// A read is about to be made: the device must be known and linked.
    case prepareRead(DeviceID)
    /// A write is about to be queued: the device must be known; answers its class's settings.
    case prepareWrite(DeviceID)
    /// Subscribe to a characteristic (lower-case 128-bit UUID) from now on.
    case subscribe(DeviceID, characteristic: String)
    case unsubscribe(DeviceID, characteristic: String)
}

extension FleetCommand {
    /// The device the command is about.
    public var device: DeviceID {
        switch self {
        case .pin(let id, _, _), .unpin(let id), .disconnect(let id), .reconnect(let id), .prepareRead(let id), .prepareWrite(let id),
            .subscribe(let id, _), .unsubscribe(let id, _):
            id
        }
    }
}

/// How a device pinned at run time is handled.
public struct FleetPinOptions: Sendable, Hashable, Codable {
    /// A class of the configuration; nil is the `default` class.
    public var className: String?
    public var priority: Int
    public var name: String?

    public init(className: String? = nil, priority: Int = 0, name: String? = nil) {
        self.className = className
        self.priority = priority
        self.name = name
    }

    /// What is wrong with these options, whoever sent them (the control interface, the broker):
    /// a class name of 1 to 64 bytes, a name of at most 248 bytes (a GAP device name), a
    /// priority within `priorities`. Nil when they are fine.
    public var problem: String? {
        if let className, className.isEmpty || className.utf8.count > 64 { return "a class name has 1 to 64 bytes" }
        if let name, name.utf8.count > 248 { return "a name has at most 248 bytes (a GAP device name)" }
        if !Self.priorities.contains(priority) { return "a priority is \(Self.prioritiesText)" }
        return nil
    }

    /// The one range of a device's priority, wherever it is set: the configuration file
    /// (`[[pinned]]`, `[pool]`, `[[pool.rules]]`), D-Bus, the broker and wearfleetctl.
    public static let priorities = 0...1000
    public static let prioritiesText = "an integer from \(priorities.lowerBound) to \(priorities.upperBound)"
}

/// Why a command was refused. Every refusal leaves the fleet as it was.
public enum FleetCommandError: Error, Sendable, Hashable, CustomStringConvertible {
    case unknownDevice(DeviceID)
    case unknownClass(String)
    case alreadyPinned(DeviceID)
    /// Pinned by the configuration file (at `definedAt`, `file:line`): unpin it there (and reload).
    case pinnedByConfiguration(DeviceID, definedAt: String?)
    case notPinned(DeviceID)
    /// The device has no usable link now (not ready or degraded).
    case notConnected(DeviceID)
    /// Not a Bluetooth UUID.
    case invalidCharacteristic(String)
    /// BlueZ shows no such characteristic on the device.
    case unknownCharacteristic(DeviceID, String)
    /// The characteristic's flags do not allow the operation (`read`, `notify`).
    case notPermitted(DeviceID, String, operation: String)
    case alreadySubscribed(DeviceID, String)
    case notSubscribed(DeviceID, String)
    /// bluetoothd refused or failed the operation.
    case failed(DeviceEvent.Failure)
    /// The run-time pins could not be saved in the state directory, so the pin or unpin was
    /// undone: nothing changed.
    case notSaved(reason: String)
    /// `FleetPinOptions.problem` names what is wrong.
    case invalidPinOptions(String)
    /// As many run-time pins as `FleetStateMachine.runtimePinLimit` exist already.
    case tooManyRuntimePins(limit: Int)

    public var description: String {
        switch self {
        case .unknownDevice(let id): "\(id.address) is not a device of the fleet"
        case .unknownClass(let name): "no device class named \(name)"
        case .alreadyPinned(let id): "\(id.address) is already pinned"
        case .pinnedByConfiguration(let id, let definedAt):
            "\(id.address) is pinned by the configuration file\(definedAt.map { " at \($0)" } ?? ""); unpin it there and reload"
        case .notPinned(let id): "\(id.address) is not pinned at run time"
        case .notConnected(let id): "\(id.address) is not connected"
        case .invalidCharacteristic(let text): "\(text) is not a Bluetooth UUID"
        case .unknownCharacteristic(let id, let uuid): "\(id.address) has no characteristic \(uuid)"
        case .notPermitted(let id, let uuid, let operation): "characteristic \(uuid) of \(id.address) does not allow \(operation)"
        case .alreadySubscribed(let id, let uuid): "\(id.address) is already subscribed to \(uuid)"
        case .notSubscribed(let id, let uuid): "\(id.address) is not subscribed to \(uuid)"
        case .notSaved(let reason): "the run-time pins could not be saved, so nothing changed: \(reason)"
        case .invalidPinOptions(let problem): "invalid pin options: \(problem)"
        case .tooManyRuntimePins(let limit): "\(limit) devices are pinned at run time already, the most there may be; unpin one first"
        case .failed(let failure): "bluetoothd: \(failure.name)\(failure.message.isEmpty ? "" : ": \(failure.message)")"
        }
    }
}
