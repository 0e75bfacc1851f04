import Fleet
import Logging
import SystemdSupport

/// `systemctl reload` (SIGHUP): re-reads the configuration and its drop-ins, validates them, and
/// applies the difference to the running fleet. An invalid configuration is reported line by
/// line (`file:line: message`) and the running one is kept.
actor ConfigurationReloader {
    private var current: WearfleetConfiguration
    private let configPath: String
    private let dropInDirectory: String
    private let orchestrator: FleetOrchestrator
    private let store: StateStore
    private let notifier: SystemdNotifier
    private let logger: Logger

    init(
        current: WearfleetConfiguration, configPath: String, dropInDirectory: String, orchestrator: FleetOrchestrator,
        store: StateStore, notifier: SystemdNotifier, logger: Logger
    ) {
        self.current = current
        self.configPath = configPath
        self.dropInDirectory = dropInDirectory
        self.orchestrator = orchestrator
        self.store = store
        self.notifier = notifier
        self.logger = logger
    }

    func reload() async {
        notifier.reloading(status: "reloading the configuration")
        logger.info("reloading the configuration", metadata: ["event": "reload_started", "config": "\(configPath)"])
        switch ConfigurationLoader.load(mainFile: configPath, dropInDirectory: dropInDirectory) {
        case .failure(let errors):
            for error in errors.errors {
                logger.error("\(error.description)", metadata: ["event": "reload_rejected", "config_error": "\(error.description)"])
            }
            logger.error(
                "configuration rejected; still running the previous one",
                metadata: ["event": "reload_rejected", "errors": "\(errors.errors.count)"])
            notifier.ready(status: "configuration rejected (\(errors.errors.count) errors); " + (await orchestrator.status().summary))
        case .success(let next):
            let summary = await orchestrator.reconfigure(next.runtimeConfiguration)
            for id in summary.pinnedRemoved { await store.modifyIfKnown(id) { $0.membership = .pool } }
            for id in summary.pinnedAdded { await store.modifyIfKnown(id) { $0.membership = .pinned } }
            noteRestartOnlySettings(next)
            current = next
            logger.notice("configuration reloaded: \(summary)", metadata: [
                "event": "reloaded", "pinned": "\(next.pinned.count)", "config": "\(next.sources.joined(separator: ","))",
            ])
            notifier.ready(status: await orchestrator.status().summary)
        }
    }

    /// Settings read once at start-up: say so rather than pretend they were applied.
    private func noteRestartOnlySettings(_ next: WearfleetConfiguration) {
        var pending: [String] = []
        if next.daemon.logLevel != current.daemon.logLevel { pending.append("daemon.log_level") }
        if next.daemon.stateDebounce != current.daemon.stateDebounce { pending.append("daemon.state_debounce") }
        if next.metrics != current.metrics { pending.append("metrics") }
        guard !pending.isEmpty else { return }
        logger.warning(
            "some changed settings take effect at the next restart",
            metadata: ["event": "reload_restart_needed", "settings": "\(pending.joined(separator: ","))"])
    }
}
