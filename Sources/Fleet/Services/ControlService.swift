import DBus
import Logging
import ServiceLifecycle

/// The control interface (`org.wearfleet.Daemon` on the daemon's bus) while the fleet runs.
/// Optional: when it cannot come up, `ControlEndpoint.startOrLog` says why and the service
/// reports its start anyway, so the daemon becomes ready without it. At stop the name is released
/// before the fleet stops, so readers see "not running" rather than a half-stopped daemon.
///
/// Needs the fleet service declared before it.
public struct ControlService: SequencedService {
    public let name = "control"
    private let bus: BusAddress
    private let fleet: StartedValue<FleetOrchestrator>
    private let logger: Logger

    public init(bus: BusAddress, fleet: StartedValue<FleetOrchestrator>, logger: Logger) {
        self.bus = bus
        self.fleet = fleet
        self.logger = logger
    }

    public func run(reportStarted: @escaping @Sendable () -> Void) async throws {
        let orchestrator = try fleet.get()
        let endpoint = await ControlEndpoint.startOrLog(
            bus: bus, logger: logger, status: { await orchestrator.status() }, summary: { await orchestrator.summary() },
            commands: orchestrator, fleet: orchestrator)
        reportStarted()

        try? await gracefulShutdown()
        await endpoint?.stop()
    }
}
