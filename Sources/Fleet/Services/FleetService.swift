import BlueZ
import DBus
import FleetCore
import Logging
import ServiceLifecycle

/// The fleet: a `FleetOrchestrator` that knows the state file's devices, saves what it learns,
/// tells `observers` (metrics) every event from its first, and follows bluetoothd over the BlueZ
/// connection. Started (pinned devices created, bluetoothd watched, no device connected yet)
/// before it reports its start; at stop, the state is saved, then devices are disconnected and
/// the orchestrator's work ends before `run` returns.
///
/// Needs the state store and BlueZ connection services declared before it; publishes the
/// started orchestrator in `orchestrator` for the services after it.
public struct FleetService: SequencedService {
    public let name = "fleet"
    public let orchestrator = StartedValue<FleetOrchestrator>(of: "fleet")
    private let configuration: FleetRuntimeConfiguration
    private let state: StartedValue<StateStoreService.Loaded>
    private let connection: StartedValue<DBusConnection>
    private let observers: [any FleetObserver]
    private let logger: Logger

    public init(
        configuration: FleetRuntimeConfiguration, state: StartedValue<StateStoreService.Loaded>,
        connection: StartedValue<DBusConnection>, observers: [any FleetObserver] = [], logger: Logger
    ) {
        self.configuration = configuration
        self.state = state
        self.connection = connection
        self.observers = observers
        self.logger = logger
    }

    public func run(reportStarted: @escaping @Sendable () -> Void) async throws {
        let loaded = try state.get()
        let fleet = try await FleetOrchestrator.restoring(
            loaded.known, savingIn: loaded.store, configuration: configuration,
            client: BlueZClient(connection: try connection.get()), run: loaded.run, logger: logger)
        for observer in observers { await fleet.addObserver(observer) }
        do {
            try await fleet.start()
        } catch {
            await fleet.stop()
            throw error
        }
        orchestrator.publish(fleet)
        reportStarted()

        try? await gracefulShutdown()
        // What the daemon learned is saved before the (bounded) disconnects, in case the stop is
        // cut short; the state store service's final save adds what the disconnects changed.
        _ = try? await loaded.store.flush()
        await fleet.stop()
    }
}
