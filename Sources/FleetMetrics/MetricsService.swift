import Fleet
import Logging
import ServiceLifecycle

/// The `/metrics` endpoint while the fleet runs. `metrics.recorder` must observe the fleet from
/// its start (pass it to `FleetService`'s observers); this service serves what it records.
/// Optional: when the endpoint cannot start (port in use, …) that is logged and the service
/// reports its start anyway, so the daemon runs on without metrics. Stopped before the fleet.
///
/// Needs the fleet service declared before it.
public struct MetricsService: SequencedService {
    public let name = "metrics"
    private let metrics: FleetMetrics
    private let settings: MetricsSettings
    private let fleet: StartedValue<FleetOrchestrator>
    private let logger: Logger

    public init(_ metrics: FleetMetrics, serving settings: MetricsSettings, fleet: StartedValue<FleetOrchestrator>, logger: Logger) {
        self.metrics = metrics
        self.settings = settings
        self.fleet = fleet
        self.logger = logger
    }

    public func run(reportStarted: @escaping @Sendable () -> Void) async throws {
        let endpoint = metrics.serve(settings, orchestrator: try fleet.get(), logger: logger)
        reportStarted()

        try? await gracefulShutdown()
        endpoint?.stop()
    }
}
