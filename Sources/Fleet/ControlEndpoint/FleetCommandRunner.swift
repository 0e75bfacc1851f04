import FleetControl
import FleetCore

/// Runs a checked command of the catalogue against the fleet, for every front end (the D-Bus
/// methods, MQTT's device and gateway requests): one switch over the commands, one mapping of the
/// fleet's refusals to the catalogue's error names. It answers once the fleet knows the outcome;
/// a refusal changes nothing.
public struct FleetCommandRunner: Sendable {
    /// The fleet's device with this address, if it has one (its address type wins over public).
    public typealias DeviceLookup = @Sendable (BluetoothAddress) async -> DeviceID?

    /// A command the fleet refused or that failed: the `org.wearfleet.Error.*` name and the
    /// fleet's explanation.
    public struct Failure: Error, Sendable, Hashable, CustomStringConvertible {
        public var name: String
        public var message: String

        public init(name: String, message: String) {
            self.name = name
            self.message = message
        }

        public var description: String { message }
    }

    public let fleet: any FleetCommands
    let knownDevice: DeviceLookup

    public init(fleet: any FleetCommands, knownDevice: @escaping DeviceLookup) {
        self.fleet = fleet
        self.knownDevice = knownDevice
    }

    /// Runs `command`; a refusal is a `Failure` with the catalogue's error name.
    public func run(_ command: CheckedCommand) async throws(Failure) -> CommandOutcome {
        let fleet = self.fleet
        switch command.name {
        case .pin:
            let id = try await device(command, addressType: command.addressType("address_type"))
            let options = FleetPinOptions(
                className: command.string("class"), priority: command.integer("priority") ?? 0, name: command.string("name"))
            try await Self.run { () throws(FleetCommandError) in try await fleet.pin(id, options: options) }
        case .unpin:
            let id = try await device(command)
            try await Self.run { () throws(FleetCommandError) in try await fleet.unpin(id) }
        case .disconnect:
            let id = try await device(command)
            try await Self.run { () throws(FleetCommandError) in try await fleet.disconnect(id) }
        case .reconnect:
            let id = try await device(command)
            try await Self.run { () throws(FleetCommandError) in try await fleet.reconnect(id) }
        case .read:
            let id = try await device(command)
            let uuid = try Self.required(command.uuid("uuid"), "uuid")
            let bytes = try await Self.run { () throws(FleetCommandError) in try await fleet.read(id, characteristic: uuid) }
            return .bytes(bytes)
        case .subscribe:
            let id = try await device(command)
            let uuid = try Self.required(command.uuid("uuid"), "uuid")
            try await Self.run { () throws(FleetCommandError) in try await fleet.subscribe(id, characteristic: uuid) }
        case .unsubscribe:
            let id = try await device(command)
            let uuid = try Self.required(command.uuid("uuid"), "uuid")
            try await Self.run { () throws(FleetCommandError) in try await fleet.unsubscribe(id, characteristic: uuid) }
        case .pair:
            let id = try await device(command)
            try await Self.run { () throws(FleetCommandError) in try await fleet.pair(id) }
        case .unpair:
            let id = try await device(command)
            try await Self.run { () throws(FleetCommandError) in try await fleet.unpair(id) }
        case .nearby:
            let seconds = command.integer("scan") ?? 0
            let devices = await fleet.nearby(scanning: seconds > 0 ? .seconds(seconds) : nil)
            return .records(devices.map(\.record))
        case .write:
            let id = try await device(command)
            let uuid = try Self.required(command.uuid("uuid"), "uuid")
            let bytes = try Self.required(command.bytes("value"), "value")
            let mode: OutgoingWriteMode = switch command.word("mode") {
            case "command": .withoutResponse
            case "auto": .automatic
            default: .withResponse
            }
            let qos = command.word("qos").flatMap { word in OutgoingQoS.allCases.first { $0.description == word } }
            do throws(FleetWriteError) {
                let outcome = try await fleet.writeAndWait(
                    id, characteristic: uuid, bytes: bytes, qos: qos, mode: mode, replaceable: command.bool("replace") ?? false,
                    budget: FleetOrchestrator.writeAnswerBudget)
                return .word(outcome.description)
            } catch {
                throw Failure(name: Self.errorName(error), message: error.description)
            }
        }
        return .done
    }

    // MARK: - Arguments

    /// The device the command names: of the given address type, else the fleet's device with
    /// that address, else the public one.
    private func device(_ command: CheckedCommand, addressType: AddressType? = nil) async throws(Failure) -> DeviceID {
        let address = try Self.required(command.address, "address")
        if let addressType { return DeviceID(address: address, addressType: addressType) }
        return await knownDevice(address) ?? DeviceID(address: address)
    }

    /// A value the checker guarantees; its absence is a bug of the catalogue, answered as an
    /// invalid option rather than a trap.
    private static func required<T>(_ value: T?, _ argument: String) throws(Failure) -> T {
        guard let value else {
            throw Failure(name: WearfleetControl.ErrorName.invalidOption, message: "'\(argument)' is missing")
        }
        return value
    }

    // MARK: - Errors

    private static func run<T: Sendable>(_ body: @Sendable () async throws(FleetCommandError) -> T) async throws(Failure) -> T {
        do {
            return try await body()
        } catch {
            throw Failure(name: errorName(error), message: error.description)
        }
    }

    /// The catalogue's name for a refused or failed command.
    public static func errorName(_ error: FleetCommandError) -> String {
        let names = WearfleetControl.ErrorName.self
        switch error {
        case .unknownDevice: return names.unknownDevice
        case .unknownClass: return names.unknownClass
        case .alreadyPinned: return names.alreadyPinned
        case .pinnedByConfiguration: return names.pinnedByConfiguration
        case .notPinned: return names.notPinned
        case .notConnected: return names.notConnected
        case .invalidCharacteristic: return names.invalidUUID
        case .unknownCharacteristic: return names.unknownCharacteristic
        case .notPermitted: return names.notSupported
        case .alreadySubscribed: return names.alreadySubscribed
        case .notSubscribed: return names.notSubscribed
        case .failed: return names.bluetoothFailed
        case .notSaved: return names.notSaved
        case .invalidPinOptions: return names.invalidOption
        case .tooManyRuntimePins: return names.tooManyPins
        }
    }

    /// The catalogue's name for a refused or failed write.
    public static func errorName(_ error: FleetWriteError) -> String {
        let names = WearfleetControl.ErrorName.self
        switch error {
        case .unknownDevice: return names.unknownDevice
        case .unknownCharacteristic: return names.unknownCharacteristic
        case .notWritable: return names.notSupported
        case .queueFull: return names.queueFull
        case .tooLarge: return names.tooLarge
        case .invalidCharacteristic: return names.invalidUUID
        case .notConnected: return names.notConnected
        case .notSent: return names.notSent
        case .failed: return names.bluetoothFailed
        case .timedOut: return names.timedOut
        case .replaced: return names.replaced
        }
    }
}
