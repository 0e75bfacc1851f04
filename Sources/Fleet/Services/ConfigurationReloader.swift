import Logging
import SystemdSupport

/// One `systemctl reload`: re-reads the configuration and its drop-ins, validates them, and
/// applies the difference to the running fleet as one input, bracketed by `RELOADING=1` (with
/// `MONOTONIC_USEC`) and `READY=1`.
///
/// Guarantees: an invalid configuration changes nothing (each error is logged as
/// `file:line: message`, `reload_rejected`, and the running configuration is kept); a valid one
/// is applied whole, the state file's pinned/pool records follow it, and changed settings that
/// only a restart applies are logged (`reload_restart_needed`), not silently ignored.
public struct ConfigurationReloader: Sendable {
    private let configPath: String
    private let dropInDirectory: String
    private let orchestrator: FleetOrchestrator
    private let store: StateStore
    private let notifier: any ReloadNotifier
    private let logger: Logger
    private let appliers: [ReloadApplier]

    /// - Parameter appliers: the other parts that take a reloaded configuration (MQTT), called
    ///   in order after the fleet took it and before `READY=1`.
    public init(
        configPath: String, dropInDirectory: String, orchestrator: FleetOrchestrator, store: StateStore,
        notifier: any ReloadNotifier = SystemdNotifier(), appliers: [ReloadApplier] = [], logger: Logger
    ) {
        self.configPath = configPath
        self.dropInDirectory = dropInDirectory
        self.orchestrator = orchestrator
        self.store = store
        self.notifier = notifier
        self.appliers = appliers
        self.logger = logger
    }

    /// Reloads and returns the configuration now running: the new one, or `current` when the
    /// new one was rejected.
    public func reload(replacing current: WearfleetConfiguration) async -> WearfleetConfiguration {
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
            return current
        case .success(let next):
            let summary = await orchestrator.reconfigure(next.runtimeConfiguration)
            await store.record(ConfigurationReload.membershipChanges(after: summary))
            for apply in appliers { await apply(next) }
            let restartOnly = ConfigurationReload.restartOnlyChanges(from: current, to: next)
            if !restartOnly.isEmpty {
                logger.warning(
                    "some changed settings take effect at the next restart",
                    metadata: ["event": "reload_restart_needed", "settings": "\(restartOnly.joined(separator: ","))"])
            }
            for (device, className) in summary.runtimePinsWithoutClass.sorted(by: { $0.key < $1.key }) {
                logger.warning(
                    "a run-time pin's class is gone from the configuration: it runs with the default class",
                    metadata: ["event": "runtime_pin_class_missing", "device_address": "\(device.address)", "class": "\(className)"])
            }
            logger.notice("configuration reloaded: \(summary)", metadata: [
                "event": "reloaded", "pinned": "\(next.pinned.count)", "config": "\(next.sources.joined(separator: ","))",
            ])
            notifier.ready(status: await orchestrator.status().summary)
            return next
        }
    }
}

/// A part of the daemon outside the fleet that applies a reloaded configuration itself.
public typealias ReloadApplier = @Sendable (WearfleetConfiguration) async -> Void

/// What a reload tells the service manager: `RELOADING=1` when it begins, `READY=1` when it is
/// over. `SystemdNotifier` in the daemon; tests record them instead of writing to a
/// `NOTIFY_SOCKET` that is process-wide.
public protocol ReloadNotifier: Sendable {
    @discardableResult func reloading(status: String?) -> SystemdNotifier.Outcome
    @discardableResult func ready(status: String?) -> SystemdNotifier.Outcome
}

extension SystemdNotifier: ReloadNotifier {}
