import ArgumentParser
import Fleet
import FoundationEssentials
import Glibc
import Logging
import ServiceLifecycle
import SystemdSupport

/// `wearfleetd`: keeps a fleet of BLE wearables connected through BlueZ. Wiring only: the work
/// is in Fleet, FleetCore, BlueZ and DBus.
@main
struct Wearfleetd: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "wearfleetd", abstract: "Keeps a fleet of Bluetooth LE wearables connected through BlueZ.")

    @Option(help: "The configuration file (drop-ins are read from FILE's directory + .d).")
    var config: String = ConfigurationLoader.defaultMainFile

    @Option(help: "The state directory (default: $STATE_DIRECTORY, else /var/lib/wearfleet).")
    var stateDir: String?

    @Option(help: "The D-Bus address of bluetoothd's bus (default: the system bus).")
    var bus: String?

    @Option(help: "journal, console or json (default: journal under systemd, else console).")
    var logFormat: String?

    @Flag(help: "Validate the configuration and exit: 0 when valid, 78 (EX_CONFIG) with file:line errors otherwise.")
    var checkConfig = false

    func run() async throws {
        let dropIns = ConfigurationLoader.dropInDirectory(forMainFile: config)
        if checkConfig {
            let result = ConfigurationCheck.run(configPath: config, dropInDirectory: dropIns)
            print(result.output)
            throw ExitCode(result.exitCode)
        }
        let settings: WearfleetConfiguration
        switch ConfigurationLoader.load(mainFile: config, dropInDirectory: dropIns) {
        case .success(let value): settings = value
        case .failure(let errors):
            for error in errors.errors { StandardErrorSink().write(line: error.description) }
            throw ExitCode(78)
        }
        var format: LogFormat?
        if let logFormat {
            guard let parsed = LogFormat(rawValue: logFormat) else {
                throw ValidationError("--log-format must be journal, console or json")
            }
            format = parsed
        }
        let environment = ProcessInfo.processInfo.environment
        _ = LoggingSetup.bootstrap(format: format, identifier: "wearfleetd", level: settings.daemon.logLevel, environment: environment)
        let logger = Logger(label: "wearfleetd")

        let daemon = FleetDaemon(
            settings: settings, configPath: config, dropInDirectory: dropIns,
            stateDirectory: StateDirectory.resolve(argument: stateDir, environment: environment),
            bus: bus, logger: logger)
        // SIGTERM (systemctl stop) and SIGINT shut down gracefully: devices are disconnected and
        // the state file is written before exit. SIGHUP is the daemon's own (reload).
        let group = ServiceGroup(
            services: [daemon], gracefulShutdownSignals: [.sigterm, .sigint], logger: logger)
        do {
            try await group.run()
        } catch let failure as DaemonFailure {
            StandardErrorSink().write(line: "wearfleetd: \(failure.message)")
            throw ExitCode(failure.exitCode)
        }
    }
}
