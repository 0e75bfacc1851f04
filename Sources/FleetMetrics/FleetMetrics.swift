import Fleet
import FleetCore

/// The daemon's metrics in one object: a Prometheus registry of its own (`exporter`) and the
/// `recorder` that the orchestrator feeds. Register the recorder before the orchestrator starts
/// (`orchestrator.addObserver(metrics.recorder)`), then `serve` the endpoint.
public final class FleetMetrics: Sendable {
    public let exporter: PrometheusExporter
    public let recorder: FleetMetricsRecorder

    public init(
        clock: any MonotonicClock = SystemMonotonicClock(),
        wallClock: @escaping @Sendable () -> Double = FleetMetricsRecorder.unixTime
    ) {
        exporter = PrometheusExporter()
        recorder = FleetMetricsRecorder(factory: exporter.factory, clock: clock, wallClock: wallClock)
    }

    /// The exposition after refreshing the snapshot figures from `snapshot` (nil: the
    /// orchestrator did not answer; serve the figures as they are).
    public func exposition(after snapshot: FleetMetricsSnapshot?) -> [UInt8] {
        recorder.refresh(from: snapshot)
        return exporter.exposition(adding: recorder.deviceFamilies())
    }
}
