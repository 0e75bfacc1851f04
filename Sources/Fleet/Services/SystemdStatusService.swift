import Logging
import ServiceLifecycle
import SystemdSupport

/// What systemd hears from the daemon: `READY=1` once every service declared before this one has
/// started (the fleet, and the control interface whether or not it came up), then `STATUS=` every
/// `statusInterval` and `WATCHDOG=1` pings only while the orchestrator's loop applies its inputs
/// (`WatchdogService`, when `WATCHDOG_USEC` is set), and `STOPPING=1` as soon as shutdown reaches
/// it, before the control interface and the fleet stop.
///
/// Needs the state store and fleet services declared before it. Its pings and status updates run
/// as child tasks of `run`, ended before `run` returns.
public struct SystemdStatusService: SequencedService {
    public let name = "systemd status"
    private let configuration: WearfleetConfiguration
    private let state: StartedValue<StateStoreService.Loaded>
    private let fleet: StartedValue<FleetOrchestrator>
    private let notifier: SystemdNotifier
    private let statusInterval: Duration
    private let logger: Logger

    public init(
        configuration: WearfleetConfiguration, state: StartedValue<StateStoreService.Loaded>,
        fleet: StartedValue<FleetOrchestrator>, notifier: SystemdNotifier = SystemdNotifier(),
        statusInterval: Duration = .seconds(5), logger: Logger
    ) {
        self.configuration = configuration
        self.state = state
        self.fleet = fleet
        self.notifier = notifier
        self.statusInterval = statusInterval
        self.logger = logger
    }

    public func run(reportStarted: @escaping @Sendable () -> Void) async throws {
        let known = try state.get().known
        let orchestrator = try fleet.get()
        // READY once the configuration is loaded and BlueZ is watched, not after devices connect.
        notifier.ready(status: await orchestrator.status().summary)
        logger.notice("wearfleetd started", metadata: [
            "event": "started", "pinned": "\(configuration.pinned.count)", "known_devices": "\(known.count)",
            "config": "\(configuration.sources.joined(separator: ","))",
        ])
        reportStarted()

        await withTaskGroup(of: Void.self) { group in
            let notifier = self.notifier
            if let interval = notifier.watchdogInterval {
                let logger = self.logger
                // The probe goes through the fleet's input queue: a loop that stops applying
                // inputs stops the pings (the probe's deadline passes), a bluetoothd that does
                // not answer does not.
                group.addTask {
                    await WatchdogService(notifier: notifier, interval: interval, logger: logger) {
                        await orchestrator.heartbeat()
                    }.run()
                }
            }
            let statusInterval = self.statusInterval
            group.addTask {
                while true {
                    do { try await Task.sleep(for: statusInterval) } catch { return }
                    notifier.status(await orchestrator.summary())
                }
            }
            try? await gracefulShutdown()
            group.cancelAll()
        }
        notifier.stopping()
        logger.notice("wearfleetd stopping", metadata: ["event": "stopping"])
    }
}
