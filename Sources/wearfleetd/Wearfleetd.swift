import ArgumentParser
import DBus
import Fleet
import FleetMetrics
import FleetMQTT
import FoundationEssentials
import Logging
import ServiceLifecycle
import SystemdSupport

/// `wearfleetd`: keeps a fleet of BLE wearables connected through BlueZ. Argument parsing and
/// wiring only: the services are in Fleet and FleetMetrics, the work in Fleet, FleetCore, BlueZ
/// and DBus.
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
        HeapPolicy.apply()
        let environment = ProcessInfo.processInfo.environment
        _ = LoggingSetup.bootstrap(format: format, identifier: "wearfleetd", level: settings.daemon.logLevel, environment: environment)
        let logger = Logger(label: "wearfleetd")
        let address: BusAddress = bus.map { .address($0) } ?? .system

        // Started in this order, each once the one before it has started; stopped in reverse.
        let state = StateStoreService(
            directory: StateDirectory.resolve(argument: stateDir, environment: environment),
            debounce: settings.daemon.stateDebounce, forgetAfter: settings.daemon.forgetAfter,
            pinned: Set(settings.pinned.map(\.id)), logger: logger)
        let connection = BlueZConnectionService(bus: address, logger: logger)
        let metrics = FleetMetrics()
        let fleet = FleetService(
            configuration: settings.runtimeConfiguration, state: state.loaded, connection: connection.connection,
            observers: [metrics.recorder], pairing: settings.pairing, environment: environment,
            sharedWithOtherGateways: settings.clusterOwnership != nil, logger: logger)
        let mqtt = MQTTService(
            settings.mqtt, ownership: settings.clusterOwnership, fleet: fleet.orchestrator, metricsFactory: metrics.exporter.factory, environment: environment, logger: logger)
        let services: [any SequencedService] = [
            state, connection, fleet,
            MetricsService(metrics, serving: settings.metrics, fleet: fleet.orchestrator, logger: logger),
            mqtt,
            ControlService(bus: address, fleet: fleet.orchestrator, logger: logger),
            SystemdStatusService(configuration: settings, state: state.loaded, fleet: fleet.orchestrator, logger: logger),
            await ConfigurationReloadService(
                initial: settings, configPath: config, dropInDirectory: dropIns, state: state.loaded,
                fleet: fleet.orchestrator, appliers: [{ await mqtt.apply($0.mqtt, ownership: $0.clusterOwnership) }], logger: logger),
        ]
        // SIGTERM (systemctl stop) and SIGINT shut down gracefully: devices are disconnected and
        // the state file is written before exit. SIGHUP is the reload service's.
        do {
            try await ServiceSequence(services).group(gracefulShutdownSignals: [.sigterm, .sigint], logger: logger).run()
        } catch let failure as DaemonFailure {
            StandardErrorSink().write(line: "wearfleetd: \(failure.message)")
            throw ExitCode(failure.exitCode)
        }
    }
}
