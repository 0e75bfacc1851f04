import FoundationEssentials
import Logging
import ServiceLifecycle

/// The known-devices file for the daemon's run: loaded at start (a corrupt file is set aside and
/// reported, the daemon starts anyway), written one last time at stop, after every later service
/// (the fleet's disconnects included) has stopped.
///
/// Throws `DaemonFailure` (73, EX_CANTCREAT) when the state directory is unusable.
public struct StateStoreService: SequencedService {
    /// The store and the devices it held at start-up.
    public struct Loaded: Sendable {
        public let store: StateStore
        public let known: [KnownDevice]
    }

    public let name = "state store"
    public let loaded = StartedValue<Loaded>(of: "state store")
    private let directory: String
    private let debounce: Duration
    private let logger: Logger

    public init(directory: String, debounce: Duration, logger: Logger) {
        self.directory = directory
        self.debounce = debounce
        self.logger = logger
    }

    public func run(reportStarted: @escaping @Sendable () -> Void) async throws {
        let store = StateStore(directory: URL(fileURLWithPath: directory), debounce: debounce, logger: logger)
        let known: [KnownDevice]
        do {
            known = try await store.load().devices
            logger.info("state loaded", metadata: [
                "event": "state_loaded", "known_devices": "\(known.count)", "state_directory": "\(directory)",
            ])
        } catch {
            logger.critical("cannot use the state directory", metadata: ["state_directory": "\(directory)", "error": "\(error)"])
            throw DaemonFailure(message: "\(error)", exitCode: 73)
        }
        loaded.publish(Loaded(store: store, known: known))
        reportStarted()

        try? await gracefulShutdown()
        do {
            try await store.flush()
            logger.info("state saved", metadata: ["event": "state_saved", "state_directory": "\(directory)"])
        } catch {
            logger.error("could not save the state file", metadata: ["event": "state_save_failed", "error": "\(error)"])
        }
    }
}
