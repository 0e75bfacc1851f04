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
    private let pairing: PairingSettings
    private let environment: [String: String]
    private let logger: Logger
    /// Several gateways share the fleet (`[cluster]`): no device connects until it is given.
    private let sharedWithOtherGateways: Bool

    /// `pairing` sets up the pairing agent (its passkeys file resolved in `environment`'s
    /// `CREDENTIALS_DIRECTORY` when it names a credential). `sharedWithOtherGateways` turns the
    /// ownership gate on before the fleet starts, so that not one device is connected before the
    /// gateways have agreed who connects it.
    public init(
        configuration: FleetRuntimeConfiguration, state: StartedValue<StateStoreService.Loaded>,
        connection: StartedValue<DBusConnection>, observers: [any FleetObserver] = [], pairing: PairingSettings = PairingSettings(),
        environment: [String: String] = [:], sharedWithOtherGateways: Bool = false, logger: Logger
    ) {
        self.sharedWithOtherGateways = sharedWithOtherGateways
        self.pairing = pairing
        self.environment = environment
        self.configuration = configuration
        self.state = state
        self.connection = connection
        self.observers = observers
        self.logger = logger
    }

    public func run(reportStarted: @escaping @Sendable () -> Void) async throws {
        let loaded = try state.get()
        let client = BlueZClient(connection: try connection.get())
        let fleet = try await FleetOrchestrator.restoring(
            loaded.known, savingIn: loaded.store, configuration: configuration, client: client, run: loaded.run, logger: logger)
        for observer in observers { await fleet.addObserver(observer) }
        let agent = pairingAgent(client: client)
        agent.answer(for: { id in await fleet.status(of: id) != nil })
        agent.whenKeyGiven { id in await fleet.pairingKeyGiven(id) }
        await fleet.addObserver(agent)
        let agentRun = Task { await agent.run() }
        if sharedWithOtherGateways { await fleet.setOwnershipGate(enabled: true) }
        defer {
            agent.finish()
            agentRun.cancel()
        }
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
        agent.finish()
        await agentRun.value
    }

    /// The agent with `[pairing]`'s capability and passkeys (none without a passkeys file, or
    /// when it names a credential but the unit gives none: said once here).
    private func pairingAgent(client: BlueZClient) -> PairingAgent {
        var lookup: PairingAgent.PairingPasskeysLookup = { _ in nil }
        if let name = pairing.passkeysFile {
            if let file = PairingPasskeysFile(name, environment: environment, logger: logger) {
                logger.info(
                    "pairing: \(file.read().count) passkeys in \(file.path)", metadata: ["event": "pairing_passkeys_read"])
                lookup = { address in file.read().passkey(for: address) }
            } else {
                logger.error(
                    "pairing: passkeys_file \"\(name)\" names a credential, but $CREDENTIALS_DIRECTORY is not set (LoadCredential= in the unit); no passkeys",
                    metadata: ["event": "pairing_passkeys_unreadable"])
            }
        }
        return PairingAgent(client: client, capability: pairing.capability.rawValue, passkeys: lookup, logger: logger)
    }
}
