import ArgumentParser
import FleetControl
import FleetCore
import Foundation
import GATT

// The subcommands that change the fleet: each one method of org.wearfleet.Daemon1, answered once
// the daemon knows the outcome. Only root and members of group wearfleet-admin may run them.

/// The device argument and `--json`, shared by the commands.
struct CommandTarget: ParsableArguments {
    @OptionGroup var bus: BusOptions

    @Argument(help: ArgumentHelp("The device's Bluetooth address.", valueName: "AA:BB:CC:DD:EE:FF"))
    var address: String

    @Flag(help: "Print a JSON object (schema in README, \"wearfleetctl\") instead of a line of text.")
    var json = false

    func validate() throws {
        guard BluetoothAddress(address) != nil else {
            throw ValidationError("invalid address '\(address)': expected AA:BB:CC:DD:EE:FF")
        }
    }

    /// Runs the call and prints `result`'s text or JSON.
    func run(_ body: (ControlClient) async throws -> ControlCommandResult) async throws {
        try await bus.withClient { client in
            let result = try await body(client)
            print(json ? try result.json() : result.text)
        }
    }

    /// Runs a command whose answer is only that it was done: `call` acts on the address, and the
    /// result reports `command` and the address.
    func run(_ command: String, _ call: (ControlClient, String) async throws -> Void) async throws {
        try await run { client in
            try await call(client, address)
            return ControlCommandResult(command: command, address: address)
        }
    }
}

/// A UUID argument, checked before the call.
private func checkedUUID(_ text: String) throws -> String {
    guard BluetoothUUID(text) != nil else {
        throw ValidationError("invalid UUID '\(text)': expected a 16-bit (2a37), 32-bit or 128-bit Bluetooth UUID")
    }
    return text
}

struct PinCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "pin",
        abstract: "Pin a device at run time: the daemon keeps it connected, across restarts and reloads.",
        discussion: "The pin is saved in the state directory (runtime-pins.json) and merges with the configuration's pins.")

    @OptionGroup var target: CommandTarget

    @Option(name: .customLong("class"), help: ArgumentHelp("A [classes.NAME] of the configuration (default: default).", valueName: "name"))
    var className: String?

    @Option(help: ArgumentHelp("Orders pinned devices when slots run short (higher first).", valueName: "n"))
    var priority: Int32?

    @Option(help: ArgumentHelp("A name for logs and status.", valueName: "text"))
    var name: String?

    @Flag(help: "The address is a random (LE) address.")
    var random = false

    func run() async throws {
        let options = ControlPinOptions(addressType: random ? "random" : nil, className: className, priority: priority, name: name)
        try await target.run("pin") { try await $0.pin($1, options: options) }
    }
}

struct UnpinCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "unpin", abstract: "Undo a run-time pin (a pin of the configuration file is refused with its file:line).")

    @OptionGroup var target: CommandTarget

    func run() async throws {
        try await target.run("unpin") { try await $0.unpin($1) }
    }
}

struct DisconnectCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "disconnect", abstract: "Release a device's link and hold it disconnected until 'reconnect'.")

    @OptionGroup var target: CommandTarget

    func run() async throws {
        try await target.run("disconnect") { try await $0.disconnect($1) }
    }
}

struct ReconnectCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "reconnect", abstract: "Pursue a device now: lift a hold, clear its backoff and a given-up budget.")

    @OptionGroup var target: CommandTarget

    func run() async throws {
        try await target.run("reconnect") { try await $0.reconnect($1) }
    }
}

/// A device and one of its characteristics: what `read`, `subscribe` and `unsubscribe` act on.
struct CharacteristicTarget: ParsableArguments {
    @OptionGroup var device: CommandTarget

    @Argument(help: ArgumentHelp("The characteristic's UUID (2a37 or the 128-bit form).", valueName: "UUID"))
    var uuid: String

    func validate() throws { _ = try checkedUUID(uuid) }

    /// Runs a command whose answer is only that it was done: the result reports `command`, the
    /// address and the UUID.
    func run(_ command: String, _ call: (ControlClient, _ address: String, _ uuid: String) async throws -> Void) async throws {
        try await device.run { client in
            try await call(client, device.address, uuid)
            return ControlCommandResult(command: command, address: device.address, uuid: uuid)
        }
    }
}

struct ReadCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "read", abstract: "Read a characteristic of a connected device; prints its value in hex.")

    @OptionGroup var target: CharacteristicTarget

    func run() async throws {
        try await target.device.run { client in
            let value = try await client.read(target.device.address, uuid: target.uuid)
            return ControlCommandResult(command: "read", address: target.device.address, uuid: target.uuid, value: value)
        }
    }
}

struct SubscribeCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "subscribe",
        abstract: "Subscribe to a characteristic's notifications from now on (kept across reloads, not restarts).")

    @OptionGroup var target: CharacteristicTarget

    func run() async throws {
        try await target.run("subscribe") { try await $0.subscribe($1, uuid: $2) }
    }
}

struct UnsubscribeCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "unsubscribe", abstract: "Stop a characteristic's notifications (the class's own subscriptions too).")

    @OptionGroup var target: CharacteristicTarget

    func run() async throws {
        try await target.run("unsubscribe") { try await $0.unsubscribe($1, uuid: $2) }
    }
}

struct WriteCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "write",
        abstract: "Write a value to a characteristic of a connected device; answers once it is acknowledged (or sent).")

    enum QoS: String, ExpressibleByArgument, CaseIterable {
        case control, normal, bulk
    }

    @OptionGroup var target: CommandTarget

    @Argument(help: ArgumentHelp("The characteristic's UUID.", valueName: "UUID"))
    var uuid: String

    @Argument(help: ArgumentHelp("The value in hex (0a1b2c; ':' between bytes is allowed).", valueName: "HEX"))
    var hex: String

    @Flag(help: "Write without response (the device does not acknowledge; answers once sent).")
    var withoutResponse = false

    @Option(help: ArgumentHelp("The write's class of service (default: the device class's default_qos).", valueName: "control|normal|bulk"))
    var qos: QoS?

    @Flag(help: ArgumentHelp(
        "Only the newest value matters: replace a still-queued --replace write to this characteristic within the class's "
            + "coalescing_window (that one is then answered 'Replaced', never sent)."))
    var replace = false

    func validate() throws {
        _ = try checkedUUID(uuid)
        guard ControlCommandResult.bytes(hex: hex) != nil else {
            throw ValidationError("invalid value '\(hex)': expected hex digits, two per byte (e.g. 0a1b)")
        }
    }

    func run() async throws {
        let value = ControlCommandResult.bytes(hex: hex) ?? []
        try await target.run { client in
            let outcome = try await client.write(
                target.address, uuid: uuid, value: value, withoutResponse: withoutResponse, qos: qos?.rawValue, replace: replace)
            return ControlCommandResult(
                command: "write", address: target.address, uuid: uuid, bytes: value.count, qos: qos?.rawValue, outcome: outcome)
        }
    }
}
