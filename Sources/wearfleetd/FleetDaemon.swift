import BlueZ
import DBus
import Fleet
import FleetMetrics
import FoundationEssentials
import Glibc
import Logging
import ServiceLifecycle
import SystemdSupport
import UnixSignals

/// The daemon's one long-running service: the state store, the BlueZ connection and the fleet
/// orchestrator, from start-up (READY=1) to a graceful shutdown (STOPPING=1, devices
/// disconnected, state file written).
struct FleetDaemon: Service {
    let settings: WearfleetConfiguration
    let configPath: String
    let dropInDirectory: String
    let stateDirectory: String
    let bus: String?
    let logger: Logger

    func run() async throws {
        let notifier = SystemdNotifier()
        // SIGHUP's default action ends the process: trap it before anyone may send a reload.
        let reloads = await UnixSignalsSequence(trapping: .sighup)

        // What the daemon learned survives restarts. A corrupt file is set aside and reported and
        // the daemon starts anyway; an unusable directory stops it (EX_CANTCREAT).
        let store = StateStore(
            directory: URL(fileURLWithPath: stateDirectory), debounce: settings.daemon.stateDebounce, logger: logger)
        let known: [KnownDevice]
        do {
            known = try await store.load().devices
            logger.info("state loaded", metadata: [
                "event": "state_loaded", "known_devices": "\(known.count)", "state_directory": "\(stateDirectory)",
            ])
        } catch {
            logger.critical("cannot use the state directory", metadata: ["state_directory": "\(stateDirectory)", "error": "\(error)"])
            throw DaemonFailure(message: "\(error)", exitCode: 73)
        }

        let address: BusAddress = bus.map { .address($0) } ?? .system
        let connection: DBusConnection
        do {
            connection = try await DBusConnection.connect(to: address, threadName: "dbus-bluez")
        } catch {
            logger.critical("cannot connect to the bus", metadata: ["bus": "\(bus ?? "system")", "error": "\(error)"])
            throw DaemonFailure(message: "cannot connect to the bus \(bus ?? "(system)"): \(error)", exitCode: 69)
        }
        let orchestrator = try await FleetOrchestrator.restoring(
            known, savingIn: store, configuration: settings.runtimeConfiguration, client: BlueZClient(connection: connection),
            logger: logger)
        // Metrics: a bind failure is logged and the daemon runs on without them (FleetMetrics.serve).
        let metricsEndpoint = await FleetMetrics.observing(orchestrator, serving: settings.metrics, logger: logger)
        try await orchestrator.start()
        // Before READY, so `systemctl start` then `wearfleetctl` finds it; optional: the fleet runs without it.
        let control = await ControlEndpoint.startOrLog(
            bus: address, logger: logger, status: { await orchestrator.status() }, summary: { await orchestrator.summary() })
        // READY once the configuration is loaded and BlueZ is watched, not after devices connect.
        notifier.ready(status: await orchestrator.status().summary)
        logger.notice("wearfleetd started", metadata: [
            "event": "started", "pinned": "\(settings.pinned.count)", "known_devices": "\(known.count)",
            "config": "\(settings.sources.joined(separator: ","))",
        ])

        let reloader = ConfigurationReloader(
            current: settings, configPath: configPath, dropInDirectory: dropInDirectory,
            orchestrator: orchestrator, store: store, notifier: notifier, logger: logger)
        await withTaskGroup(of: Void.self) { group in
            if let interval = notifier.watchdogInterval {
                // The probe is an actor call: a wedged orchestrator stops the pings, not a timer.
                group.addTask { await WatchdogService(interval: interval, logger: logger) { await orchestrator.heartbeat() }.run() }
            }
            group.addTask {
                while !Task.isCancelled {
                    do { try await Task.sleep(for: .seconds(5)) } catch { return }
                    notifier.status(await orchestrator.summary())
                }
            }
            group.addTask {
                for await _ in reloads.cancelOnGracefulShutdown() { await reloader.reload() }
            }
            try? await gracefulShutdown()
            group.cancelAll()
        }

        notifier.stopping()
        logger.notice("wearfleetd stopping", metadata: ["event": "stopping"])
        await control?.stop()
        // What the daemon learned is saved before the (bounded) disconnects, in case the stop is
        // cut short; the final save below adds what the disconnects changed.
        try? await store.flush()
        await orchestrator.stop()
        metricsEndpoint?.stop()
        await connection.close()
        do {
            try await store.flush()
            logger.info("state saved", metadata: ["event": "state_saved", "state_directory": "\(stateDirectory)"])
        } catch {
            logger.error("could not save the state file", metadata: ["event": "state_save_failed", "error": "\(error)"])
        }
    }
}
