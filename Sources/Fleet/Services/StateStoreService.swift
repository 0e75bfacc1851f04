import FleetCore
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
        /// This run's number (`StateStore.beginRun`): the first part of every `SESSION_ID`.
        public let run: UInt64
    }

    public let name = "state store"
    public let loaded = StartedValue<Loaded>(of: "state store")
    private let directory: String
    private let debounce: Duration
    private let forgetAfter: Duration?
    /// Devices never forgotten however long unseen: the configuration's pinned ones.
    private let pinned: Set<DeviceID>
    private let logger: Logger

    /// `forgetAfter`: known devices unseen this long are dropped (at start, then daily); nil
    /// keeps them forever.
    public init(
        directory: String, debounce: Duration, forgetAfter: Duration? = nil, pinned: Set<DeviceID> = [], logger: Logger
    ) {
        self.directory = directory
        self.debounce = debounce
        self.forgetAfter = forgetAfter
        self.pinned = pinned
        self.logger = logger
    }

    public func run(reportStarted: @escaping @Sendable () -> Void) async throws {
        let store = StateStore(directory: URL(fileURLWithPath: directory), debounce: debounce, logger: logger)
        var known: [KnownDevice]
        do {
            known = try await store.load().devices
            if let forgetAfter {
                let forgotten = Set(await Self.forget(in: store, after: forgetAfter, keeping: pinned, logger: logger).map(\.id))
                known.removeAll { forgotten.contains($0.id) }
            }
            logger.info("state loaded", metadata: [
                "event": "state_loaded", "known_devices": "\(known.count)", "state_directory": "\(directory)",
            ])
        } catch {
            logger.critical("cannot use the state directory", metadata: ["state_directory": "\(directory)", "error": "\(error)"])
            throw DaemonFailure(message: "\(error)", exitCode: 73)
        }
        let run = await Self.beginRun(store, logger: logger)
        loaded.publish(Loaded(store: store, known: known, run: run))
        reportStarted()

        // A daemon that runs for months forgets too, once a day.
        let (forgetAfter, pinned, logger) = (self.forgetAfter, self.pinned, self.logger)
        let forgetting = Task {
            guard let forgetAfter else { return }
            while (try? await Task.sleep(for: .seconds(86_400))) != nil {
                _ = await Self.forget(in: store, after: forgetAfter, keeping: pinned, logger: logger)
            }
        }
        try? await gracefulShutdown()
        forgetting.cancel()
        await Self.save(store, directory: directory, logger: logger)
    }

    /// Drops the known devices unseen for `forgetAfter` (the pinned ones kept) and says which.
    static func forget(in store: StateStore, after forgetAfter: Duration, keeping pinned: Set<DeviceID>, logger: Logger) async
        -> [KnownDevice]
    {
        let cutoff = Date(timeIntervalSinceNow: -Double(forgetAfter.components.seconds))
        let forgotten = await store.forget(seenBefore: cutoff, keeping: pinned)
        guard !forgotten.isEmpty else { return [] }
        logger.notice("forgot known devices not seen for \(ConfigDuration.format(forgetAfter))", metadata: [
            "event": "known_devices_forgotten", "count": "\(forgotten.count)",
            "devices": "\(forgotten.map(\.id.address.description).joined(separator: " "))",
        ])
        return forgotten
    }

    /// This run's number. When the directory does not take the counter (the known-devices file
    /// would not be saved either, and that is logged when it happens), a random number above any
    /// counter a directory is likely to reach, so sessions still do not mix with other runs.
    static func beginRun(_ store: StateStore, logger: Logger) async -> UInt64 {
        do {
            let start = try await store.beginRun()
            if let damaged = start.damagedCounter {
                logger.warning("the run counter was damaged; runs are numbered from the time now, past any it counted", metadata: [
                    "event": "run_number_damaged", "found": "\(damaged)", "run": "\(start.number)",
                    "path": "\(store.runNumberFile.path)",
                ])
            }
            return start.number
        } catch {
            let run = UInt64.random(in: 1_000_000...9_999_999)
            logger.warning("cannot count this run in the state directory; sessions are numbered under a random run", metadata: [
                "event": "run_number_failed", "error": "\(error)", "run": "\(run)",
            ])
            return run
        }
    }

    /// The final save: "state saved" only when the file was written.
    static func save(_ store: StateStore, directory: String, logger: Logger) async {
        do {
            if try await store.flush() {
                logger.info("state saved", metadata: ["event": "state_saved", "state_directory": "\(directory)"])
            } else {
                logger.info("state unchanged since the last save; nothing written", metadata: [
                    "event": "state_unchanged", "state_directory": "\(directory)",
                ])
            }
        } catch {
            logger.error("could not save the state file", metadata: ["event": "state_save_failed", "error": "\(error)"])
        }
    }
}
