import Logging
import ServiceLifecycle
import SystemdSupport
import UnixSignals

/// `systemctl reload` (SIGHUP) while the daemon runs: each SIGHUP is one
/// `ConfigurationReloader.reload`, one after another, the configuration each one leaves running
/// being the next one's starting point.
///
/// SIGHUP is trapped when the service is made (its default action would end the process), so a
/// reload sent before the daemon is ready waits and is applied once this service has started.
/// At shutdown it stops taking reloads; one under way finishes first, so its `READY=1` comes
/// before the daemon's `STOPPING=1`.
///
/// Needs the state store and fleet services declared before it.
public struct ConfigurationReloadService: SequencedService {
    public let name = "reload"
    private let initial: WearfleetConfiguration
    private let configPath: String
    private let dropInDirectory: String
    private let state: StartedValue<StateStoreService.Loaded>
    private let fleet: StartedValue<FleetOrchestrator>
    private let notifier: SystemdNotifier
    private let logger: Logger
    private let reloads: UnixSignalsSequence
    private let appliers: [ReloadApplier]

    /// - Parameter initial: the configuration the daemon started with.
    public init(
        initial: WearfleetConfiguration, configPath: String, dropInDirectory: String,
        state: StartedValue<StateStoreService.Loaded>, fleet: StartedValue<FleetOrchestrator>,
        notifier: SystemdNotifier = SystemdNotifier(), appliers: [ReloadApplier] = [], logger: Logger
    ) async {
        self.appliers = appliers
        self.initial = initial
        self.configPath = configPath
        self.dropInDirectory = dropInDirectory
        self.state = state
        self.fleet = fleet
        self.notifier = notifier
        self.logger = logger
        self.reloads = await UnixSignalsSequence(trapping: .sighup)
    }

    public func run(reportStarted: @escaping @Sendable () -> Void) async throws {
        let reloader = ConfigurationReloader(
            configPath: configPath, dropInDirectory: dropInDirectory, orchestrator: try fleet.get(),
            store: try state.get().store, notifier: notifier, appliers: appliers, logger: logger)
        reportStarted()

        var running = initial
        for await _ in reloads.cancelOnGracefulShutdown() {
            running = await reloader.reload(replacing: running)
        }
    }
}
