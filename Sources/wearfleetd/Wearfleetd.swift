import ArgumentParser
import BlueZ
import DBus
import Dispatch
import Fleet
import FleetMetrics
import Foundation
import Logging
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
        let loaded = ConfigurationLoader.load(mainFile: config, dropInDirectory: dropIns)
        let settings: WearfleetConfiguration
        switch loaded {
        case .success(let value): settings = value
        case .failure(let errors):
            for error in errors.errors { FileHandle.standardError.write(Data((error.description + "\n").utf8)) }
            throw ExitCode(78)
        }
        var format: LogFormat?
        if let logFormat {
            guard let parsed = LogFormat(rawValue: logFormat) else {
                throw ValidationError("--log-format must be journal, console or json")
            }
            format = parsed
        }
        _ = LoggingSetup.bootstrap(
            format: format, identifier: "wearfleetd", level: settings.daemon.logLevel,
            environment: ProcessInfo.processInfo.environment)
        let logger = Logger(label: "wearfleetd")
        let notifier = SystemdNotifier()

        // The state store: what the daemon learned survives restarts. A corrupt file is set aside
        // and reported, and the daemon starts anyway; an unusable directory stops it (EX_CANTCREAT).
        let stateDirectory = StateDirectory.resolve(argument: stateDir, environment: ProcessInfo.processInfo.environment)
        let store = StateStore(
            directory: URL(fileURLWithPath: stateDirectory), debounce: settings.daemon.stateDebounce, logger: logger)
        do {
            let loaded = try await store.load()
            logger.info("state loaded", metadata: [
                "event": "state_loaded", "known_devices": "\(loaded.devices.count)", "state_directory": "\(stateDirectory)",
            ])
        } catch {
            logger.critical("cannot use the state directory", metadata: ["state_directory": "\(stateDirectory)", "error": "\(error)"])
            FileHandle.standardError.write(Data("wearfleetd: \(error)\n".utf8))
            throw ExitCode(73)
        }

        let address: BusAddress = bus.map { .address($0) } ?? .system
        let connection = try await DBusConnection.connect(to: address, threadName: "dbus-bluez")
        let client = BlueZClient(connection: connection)
        let orchestrator = try FleetOrchestrator(
            configuration: settings.runtimeConfiguration, client: client, logger: logger,
            seed: UInt64.random(in: .min ... .max))
        let pinnedIDs = Set(settings.pinned.map(\.id))
        await orchestrator.onPersist { id, update in
            let record = KnownDevice(id: id, membership: pinnedIDs.contains(id) ? .pinned : .pool)
            Task { await store.modify(id, creating: record) { $0.apply(update, adapter: nil, now: Date()) } }
        }
        // Metrics: a bind failure is logged and the daemon runs on without them (FleetMetrics.serve).
        let metrics = FleetMetrics()
        await orchestrator.addObserver(metrics.recorder)
        let metricsEndpoint = metrics.serve(settings.metrics, orchestrator: orchestrator, logger: logger)
        try await orchestrator.start()
        notifier.ready(status: await orchestrator.status().summary)
        logger.notice("wearfleetd started", metadata: [
            "event": "started", "pinned": "\(settings.pinned.count)", "config": "\(settings.sources.joined(separator: ","))",
        ])

        let watchdog = notifier.watchdogInterval.map { interval in
            Task {
                await WatchdogService(interval: interval, logger: logger) { await orchestrator.heartbeat() }.run()
            }
        }
        let status = Task {
            while !Task.isCancelled {
                try? await Task.sleep(for: .seconds(5))
                notifier.status(await orchestrator.status().summary)
            }
        }
        await Self.waitForTermination()
        notifier.stopping()
        logger.notice("wearfleetd stopping", metadata: ["event": "stopping"])
        status.cancel()
        watchdog?.cancel()
        await orchestrator.stop()
        metricsEndpoint?.stop()
        await connection.close()
        do {
            try await store.flush()
        } catch {
            logger.error("could not save the state file", metadata: ["error": "\(error)"])
        }
    }

    /// Returns on SIGTERM or SIGINT.
    static func waitForTermination() async {
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            let once = ResumeOnce(continuation)
            for signalNumber in [SIGTERM, SIGINT] {
                signal(signalNumber, SIG_IGN)
                let source = DispatchSource.makeSignalSource(signal: signalNumber, queue: .global())
                source.setEventHandler { once.resume() }
                source.resume()
                SignalSources.keep(source)
            }
        }
    }
}

/// Resumes a continuation at most once, whichever signal comes first.
final class ResumeOnce: @unchecked Sendable {
    // @unchecked Sendable: `continuation` is only read and cleared under `lock`.
    private let lock = NSLock()
    private var continuation: CheckedContinuation<Void, Never>?

    init(_ continuation: CheckedContinuation<Void, Never>) { self.continuation = continuation }

    func resume() {
        lock.lock()
        let pending = continuation
        continuation = nil
        lock.unlock()
        pending?.resume()
    }
}

/// Signal sources must stay referenced for as long as they should fire.
enum SignalSources {
    // nonisolated(unsafe): only touched in `keep`, under `lock`.
    nonisolated(unsafe) private static var sources: [any DispatchSourceSignal] = []
    private static let lock = NSLock()

    static func keep(_ source: any DispatchSourceSignal) {
        lock.lock()
        defer { lock.unlock() }
        sources.append(source)
    }
}
