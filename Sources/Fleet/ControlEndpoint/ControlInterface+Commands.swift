import DBus
import FleetControl
import FleetCore
import GATT

// `org.wearfleet.Daemon1`'s commands: the methods that change the fleet, each a call of
// `FleetCommands`. Every one checks the caller first (`ControlAccess`: root or the admin group;
// the bus policy checks too), then its arguments, and answers once the outcome is known. A
// refusal is a named error (`WearfleetControl.ErrorName`) and changes nothing.
//
// - `Pin(s address, a{sv} options)`: options `address_type` (s: public|random), `class` (s),
//   `priority` (i), `name` (s).
// - `Unpin(s address)`, `Disconnect(s address)`, `Reconnect(s address)`.
// - `Read(s address, s uuid) → ay`: the value as the device answered it.
// - `Subscribe(s address, s uuid)`, `Unsubscribe(s address, s uuid)`: notifications of a
//   characteristic from now on (at once on a set-up link; kept across reloads, not restarts), or
//   no more (a subscription of the class's too).
// - `Write(s address, s uuid, ay value, a{sv} options) → s`: options `without_response` (b,
//   default false) and `qos` (s: control|normal|bulk, default the class's `default_qos`);
//   answers `acknowledged` (with response: the device answered) or `sent` (without response:
//   handed to bluetoothd).

extension ControlInterface {
    /// What the command methods need: the fleet to command, who may, and the status to find a
    /// device's identity by its address.
    public struct Commands: Sendable {
        public let fleet: any FleetCommands
        public let access: ControlAccess

        public init(fleet: any FleetCommands, access: ControlAccess) {
            self.fleet = fleet
            self.access = access
        }
    }

    /// The command methods, answering through `commands`.
    static func commandMethods(_ commands: Commands, status: @escaping StatusProvider) -> [DBusMethod] {
        let optionsType = DBusType.dictionary(key: .string, value: .variant)
        let address = DBusArgument("address", .string)
        /// Checks the caller, then runs `body` with the device the address names.
        func command(
            _ name: String, inputs: [DBusArgument], outputs: [DBusArgument] = [],
            _ body: @escaping @Sendable (DBusMethodCall, DeviceID) async throws -> [DBusValue]
        ) -> DBusMethod {
            DBusMethod(name, inputs: inputs, outputs: outputs, handler: .async { call in
                try await commands.access.authorizeCommand(name, sender: call.sender)
                let text = try call.body.decode(String.self, at: 0)
                let id = try await deviceID(text, in: status(), addressType: nil)
                return try await body(call, id)
            })
        }
        return [
            DBusMethod("Pin", inputs: [address, DBusArgument("options", optionsType)], handler: .async { call in
                try await commands.access.authorizeCommand("Pin", sender: call.sender)
                let text = try call.body.decode(String.self, at: 0)
                let (addressType, options) = try pinOptions(try call.body.decode([String: DBusValue].self, at: 1))
                let id = try await deviceID(text, in: status(), addressType: addressType)
                try await run { () throws(FleetCommandError) in try await commands.fleet.pin(id, options: options) }
                return []
            }),
            command("Unpin", inputs: [address]) { _, id in
                try await run { () throws(FleetCommandError) in try await commands.fleet.unpin(id) }
                return []
            },
            command("Disconnect", inputs: [address]) { _, id in
                try await run { () throws(FleetCommandError) in try await commands.fleet.disconnect(id) }
                return []
            },
            command("Reconnect", inputs: [address]) { _, id in
                try await run { () throws(FleetCommandError) in try await commands.fleet.reconnect(id) }
                return []
            },
            command(
                "Read", inputs: [address, DBusArgument("uuid", .string)], outputs: [DBusArgument("value", .array(.byte))]
            ) { call, id in
                let uuid = try call.body.decode(String.self, at: 1)
                let bytes = try await run { () throws(FleetCommandError) in
                    try await commands.fleet.read(id, characteristic: uuid)
                }
                return [.bytes(bytes)]
            },
            command("Subscribe", inputs: [address, DBusArgument("uuid", .string)]) { call, id in
                let uuid = try call.body.decode(String.self, at: 1)
                try await run { () throws(FleetCommandError) in try await commands.fleet.subscribe(id, characteristic: uuid) }
                return []
            },
            command("Unsubscribe", inputs: [address, DBusArgument("uuid", .string)]) { call, id in
                let uuid = try call.body.decode(String.self, at: 1)
                try await run { () throws(FleetCommandError) in try await commands.fleet.unsubscribe(id, characteristic: uuid) }
                return []
            },
            command(
                "Write",
                inputs: [address, DBusArgument("uuid", .string), DBusArgument("value", .array(.byte)), DBusArgument("options", optionsType)],
                outputs: [DBusArgument("outcome", .string)]
            ) { call, id in
                let uuid = try call.body.decode(String.self, at: 1)
                let bytes = try call.body.decode([UInt8].self, at: 2)
                let (mode, qos, replace) = try writeOptions(try call.body.decode([String: DBusValue].self, at: 3))
                do {
                    let outcome = try await commands.fleet.writeAndWait(
                        id, characteristic: uuid, bytes: bytes, qos: qos, mode: mode, replaceable: replace,
                        budget: FleetOrchestrator.writeAnswerBudget)
                    return [.string(outcome.description)]
                } catch let error as FleetWriteError {
                    throw controlError(error)
                }
            },
        ]
    }

    // MARK: - Arguments

    /// The device `text` names: the fleet's device with that address (its address type), else
    /// one of `addressType` (public unless given).
    static func deviceID(_ text: String, in status: FleetStatus, addressType: AddressType?) throws -> DeviceID {
        guard let address = BluetoothAddress(text) else {
            throw DBusError(
                name: WearfleetControl.ErrorName.invalidAddress,
                message: "'\(text.prefix(64))' is not a Bluetooth address (AA:BB:CC:DD:EE:FF)")
        }
        if let addressType { return DeviceID(address: address, addressType: addressType) }
        return status.device(address: address)?.id ?? DeviceID(address: address)
    }

    /// `Pin`'s options: `address_type`, `class`, `priority`, `name`; anything else is refused.
    static func pinOptions(_ options: [String: DBusValue]) throws -> (AddressType?, FleetPinOptions) {
        var pin = FleetPinOptions()
        var addressType: AddressType?
        for (key, value) in options {
            switch (key, value.unwrappingVariant) {
            case ("address_type", .string(let text)):
                guard let type = AddressType(rawValue: text) else { throw invalidOption(key, "public or random, not '\(text.prefix(32))'") }
                addressType = type
            case ("class", .string(let name)):
                guard !name.isEmpty, name.utf8.count <= 64 else { throw invalidOption(key, "a class name of 1 to 64 bytes") }
                pin.className = name
            case ("priority", let number):
                guard let priority = integer(number), FleetPinOptions.priorities.contains(priority) else {
                    throw invalidOption(key, FleetPinOptions.prioritiesText)
                }
                pin.priority = priority
            case ("name", .string(let name)):
                guard name.utf8.count <= 248 else { throw invalidOption(key, "at most 248 bytes (a GAP device name)") }
                pin.name = name
            case ("address_type", _), ("class", _), ("name", _):
                throw invalidOption(key, "a string (s)")
            default:
                throw invalidOption(key, "not an option of Pin (address_type, class, priority, name)")
            }
        }
        return (addressType, pin)
    }

    /// `Write`'s options: `without_response` (b) and `qos` (s).
    static func writeOptions(_ options: [String: DBusValue]) throws -> (OutgoingWriteMode, OutgoingQoS?, replace: Bool) {
        var mode = OutgoingWriteMode.withResponse
        var qos: OutgoingQoS?
        var replace = false
        for (key, value) in options {
            switch (key, value.unwrappingVariant) {
            case ("without_response", .boolean(let flag)):
                mode = flag ? .withoutResponse : .withResponse
            case ("replace", .boolean(let flag)):
                replace = flag
            case ("qos", .string(let text)):
                guard let parsed = OutgoingQoS.allCases.first(where: { $0.description == text }) else {
                    throw invalidOption(key, "control, normal or bulk, not '\(text.prefix(32))'")
                }
                qos = parsed
            case ("without_response", _), ("replace", _):
                throw invalidOption(key, "a boolean (b)")
            case ("qos", _):
                throw invalidOption(key, "a string (s)")
            default:
                throw invalidOption(key, "not an option of Write (without_response, qos, replace)")
            }
        }
        return (mode, qos, replace)
    }

    private static func integer(_ value: DBusValue) -> Int? {
        switch value {
        case .int16(let v): Int(v)
        case .int32(let v): Int(v)
        case .int64(let v): Int(v)
        case .uint16(let v): Int(v)
        case .uint32(let v): Int(v)
        case .byte(let v): Int(v)
        default: nil
        }
    }

    private static func invalidOption(_ key: String, _ expected: String) -> DBusError {
        DBusError(name: WearfleetControl.ErrorName.invalidOption, message: "option '\(key.prefix(64))': \(expected)")
    }

    // MARK: - Errors

    /// Runs a fleet command, its refusal turned into the interface's named error.
    private static func run<T: Sendable>(_ body: @Sendable () async throws(FleetCommandError) -> T) async throws -> T {
        do {
            return try await body()
        } catch {
            throw controlError(error)
        }
    }

    /// The named D-Bus error for a refused or failed command.
    public static func controlError(_ error: FleetCommandError) -> DBusError {
        let names = WearfleetControl.ErrorName.self
        let name: String
        switch error {
        case .unknownDevice: name = names.unknownDevice
        case .unknownClass: name = names.unknownClass
        case .alreadyPinned: name = names.alreadyPinned
        case .pinnedByConfiguration: name = names.pinnedByConfiguration
        case .notPinned: name = names.notPinned
        case .notConnected: name = names.notConnected
        case .invalidCharacteristic: name = names.invalidUUID
        case .unknownCharacteristic: name = names.unknownCharacteristic
        case .notPermitted: name = names.notSupported
        case .alreadySubscribed: name = names.alreadySubscribed
        case .notSubscribed: name = names.notSubscribed
        case .failed: name = names.bluetoothFailed
        case .notSaved: name = names.notSaved
        case .invalidPinOptions: name = names.invalidOption
        case .tooManyRuntimePins: name = names.tooManyPins
        }
        return DBusError(name: name, message: error.description)
    }

    /// The named D-Bus error for a refused or failed write.
    public static func controlError(_ error: FleetWriteError) -> DBusError {
        let names = WearfleetControl.ErrorName.self
        let name: String
        switch error {
        case .unknownDevice: name = names.unknownDevice
        case .unknownCharacteristic: name = names.unknownCharacteristic
        case .notWritable: name = names.notSupported
        case .queueFull: name = names.queueFull
        case .tooLarge: name = names.tooLarge
        case .invalidCharacteristic: name = names.invalidUUID
        case .notConnected: name = names.notConnected
        case .notSent: name = names.notSent
        case .failed: name = names.bluetoothFailed
        case .timedOut: name = names.timedOut
        case .replaced: name = names.replaced
        }
        return DBusError(name: name, message: error.description)
    }
}
