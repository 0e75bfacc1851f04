import Fleet
import Logging

extension FleetMetrics {
    /// Metrics for `orchestrator`, as wearfleetd sets them up before `start()`: a recorder that
    /// observes it, served at the endpoint `settings` ask for (nil when off or when it cannot
    /// start; the endpoint keeps the metrics it serves).
    public static func observing(
        _ orchestrator: FleetOrchestrator, serving settings: MetricsSettings, logger: Logger
    ) async -> MetricsEndpoint? {
        let metrics = FleetMetrics()
        await orchestrator.addObserver(metrics.recorder)
        return metrics.serve(settings, orchestrator: orchestrator, logger: logger)
    }

    /// Serves `/metrics` on `settings`' address, each scrape refreshed from the orchestrator's
    /// status and write figures (waiting at most `statusTimeout` for them).
    ///
    /// Returns nil when metrics are off, or when the endpoint cannot start (port in use, address
    /// not local, …): that is logged as an error naming the address, and the daemon goes on
    /// without metrics, because keeping the fleet connected matters more than its figures.
    /// A non-loopback address is served but logged as a warning: device names and addresses are
    /// readable by anyone who can reach it.
    public func serve(
        _ settings: MetricsSettings, orchestrator: FleetOrchestrator, logger: Logger,
        limits: MetricsEndpoint.Limits = MetricsEndpoint.Limits(), statusTimeout: Duration = .seconds(2)
    ) -> MetricsEndpoint? {
        guard settings.enabled else {
            logger.info("metrics are off ([metrics] enabled = false or listen = \"\")", metadata: ["event": "metrics_off"])
            return nil
        }
        do {
            let endpoint = try MetricsEndpoint(host: settings.host, port: settings.port, limits: limits) { [self] in
                exposition(after: await SnapshotDeadline.snapshot(of: orchestrator, within: statusTimeout))
            }
            if !endpoint.isLoopback {
                logger.warning(
                    "metrics are served on a non-loopback address: anyone who can reach it reads device names and addresses",
                    metadata: ["event": "metrics_not_loopback", "listen": "\(endpoint.address)"])
            }
            logger.info("serving metrics at http://\(endpoint.address)/metrics", metadata: [
                "event": "metrics_listening", "listen": "\(endpoint.address)",
            ])
            return endpoint
        } catch {
            logger.error("metrics endpoint not started; running without metrics: \(error)", metadata: [
                "event": "metrics_failed", "listen": "\(settings.listen)", "error": "\(error)",
            ])
            return nil
        }
    }
}
