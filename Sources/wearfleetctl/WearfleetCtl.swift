import ArgumentParser
import DBus
import FleetControl
import FleetCore
import FleetReplay
import Foundation

/// `wearfleetctl`: reads wearfleetd's control interface (`org.wearfleet.Daemon1`) and prints
/// it, runs the command catalogue's commands (`CatalogueCommand`), and replays the daemon's
/// recorded inputs. Argument parsing and output only: the client,
/// rendering and JSON are in FleetControl, the replay in FleetReplay.
@main
struct WearfleetCtl: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "wearfleetctl",
        abstract: "Shows what wearfleetd is doing: the fleet's status and each device's details.",
        discussion: """
            Exit codes: 0 success; 1 wearfleetd not running or not answering, or a command refused \
            or failed (the message says why; nothing changed); 2 bad usage, address, UUID, option \
            or value; 4 no such device; 77 permission denied (root and the wearfleet group may \
            query the daemon; root and the wearfleet-admin group may change it).

            Commands that change the fleet (root and the wearfleet-admin group; wearfleetctl \
            COMMAND --help for each): \(CatalogueCommand.overview)
            """,
        version: WearfleetVersion.current,
        subcommands: [Status.self, Device.self, Watch.self, ReplayCommand.self],
        defaultSubcommand: Status.self)

    /// ArgumentParser exits 64 (EX_USAGE) on bad usage; wearfleetctl exits 2, as systemctl and
    /// most command-line tools do, so scripts can tell usage from "not running" (1).
    static func main() async {
        // The catalogue's commands are parsed from their declarations (CatalogueCommand), the
        // rest by ArgumentParser.
        let words = Array(CommandLine.arguments.dropFirst())
        if let op = words.first, let declaration = CommandCatalogue.declaration(op: op) {
            await CatalogueCommand.run(declaration, Array(words.dropFirst()))
        }
        if words.count > 1, words[0] == "help", let declaration = CommandCatalogue.declaration(op: words[1]) {
            await CatalogueCommand.run(declaration, ["--help"])
        }
        do {
            var command = try parseAsRoot()
            if var asyncCommand = command as? any AsyncParsableCommand {
                try await asyncCommand.run()
            } else {
                try command.run()
            }
        } catch {
            if exitCode(for: error) == .validationFailure {
                FileHandle.standardError.write(Data((fullMessage(for: error) + "\n").utf8))
                Foundation.exit(ControlClientError.ExitCode.usage)
            }
            exit(withError: error)
        }
    }
}

/// Which bus to read; shared by every subcommand.
struct BusOptions: ParsableArguments {
    @Option(name: .long, help: ArgumentHelp("The D-Bus address wearfleetd is on (default: the system bus).", valueName: "address"))
    var bus: String?

    var address: BusAddress { bus.map { .address($0) } ?? .system }

    /// Connects, runs `body`, closes. A `ControlClientError` is printed to stderr as
    /// `wearfleetctl: message` and becomes the process's exit code.
    func withClient(_ body: (ControlClient) async throws -> Void) async throws {
        do {
            let client = try await ControlClient.connect(to: address)
            do {
                try await body(client)
            } catch {
                await client.close()
                throw error
            }
            await client.close()
        } catch let error as ControlClientError {
            FileHandle.standardError.write(Data("wearfleetctl: \(error)\n".utf8))
            throw ExitCode(error.exitCode)
        }
    }
}

struct Status: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Show the fleet: the summary, the adapters and one row per device.")

    @OptionGroup var options: BusOptions

    @Flag(help: "Print JSON (schema in README, \"wearfleetctl\") instead of a table.")
    var json = false

    func run() async throws {
        try await options.withClient { client in
            let status = try await client.status()
            print(json ? try ControlJSON.status(status) : StatusTable.render(status).joined(separator: "\n"))
        }
    }
}

struct Device: AsyncParsableCommand {
    static let configuration = CommandConfiguration(abstract: "Show one device's details.")

    @OptionGroup var options: BusOptions

    @Argument(help: ArgumentHelp("The device's Bluetooth address.", valueName: "AA:BB:CC:DD:EE:FF"))
    var address: String

    @Flag(help: "Print JSON (schema in README, \"wearfleetctl\") instead of text.")
    var json = false

    func run() async throws {
        try await options.withClient { client in
            let device = try await client.device(address)
            print(json ? try ControlJSON.device(device) : DeviceDetails.render(device).joined(separator: "\n"))
        }
    }
}

struct ReplayCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "replay",
        abstract: "Re-run the fleet's and devices' machines from wearfleetd's recorded inputs and print each state change.",
        discussion: """
            Reads `journalctl -o json` output (record with log_level = "debug" or \
            WEARFLEET_RECORD_INPUTS=1; read with --all so that large fields are kept): \
            journalctl -u wearfleetd -o json --all | wearfleetctl replay --device AA:BB:CC:DD:EE:FF. \
            Exit codes: 0 replayed; 3 a device machine decided differently from the record; \
            65 no recorded input found; 2 bad usage; 1 the file cannot be read.
            """)

    @Option(help: ArgumentHelp("Only this device's state changes.", valueName: "AA:BB:CC:DD:EE:FF"))
    var device: String?

    @Flag(help: "Print one JSON object per line instead of text.")
    var json = false

    @Flag(help: "Print every input and event with the actions and effects the machines returned.")
    var effects = false

    @Argument(help: ArgumentHelp("journalctl -o json output; - or nothing for standard input.", valueName: "file"))
    var file: String = "-"

    func validate() throws {
        if let device, BluetoothAddress(device) == nil {
            throw ValidationError("invalid address '\(device)': expected AA:BB:CC:DD:EE:FF")
        }
    }

    func run() throws {
        var reader = JournalRecordReader()
        if file == "-" {
            while let line = readLine(strippingNewline: true) { reader.read(line: line) }
        } else {
            guard let data = FileManager.default.contents(atPath: file) else {
                FileHandle.standardError.write(Data("wearfleetctl: cannot read \(file)\n".utf8))
                throw ExitCode(1)
            }
            reader.read(text: String(decoding: data, as: UTF8.self))
        }
        let options = ReplayReport.Options(device: device.flatMap { BluetoothAddress($0) }, json: json, steps: effects)
        let report = ReplayReport(reader, options: options)
        for line in report.output { print(line) }
        for line in report.diagnostics { FileHandle.standardError.write(Data("wearfleetctl: \(line)\n".utf8)) }
        if report.exitCode != ReplayReport.ExitCode.replayed { throw ExitCode(report.exitCode) }
    }
}
