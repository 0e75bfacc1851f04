import CoreMetrics
import Synchronization

/// The client's figures, readable from any thread, and mirrored into swift-metrics handlers
/// (the daemon's Prometheus registry: `wearfleet_mqtt_*`) when a factory is given.
public final class MQTTClientCounters: Sendable {
    private let connectedFlag = Atomic<Bool>(false)
    private let publishedCount = Atomic<Int>(0)
    private let droppedCount = Atomic<Int>(0)
    private let reconnectCount = Atomic<Int>(0)
    private let connectedGauge: Gauge?
    private let publishedCounter: Counter?
    private let droppedCounter: Counter?
    private let reconnectCounter: Counter?
    private let retainedFailureCounter: Counter?

    /// The labels are `FleetMetricCatalogue`'s MQTT families (FleetMetrics, which this module
    /// does not depend on): the exporter takes their `# HELP` text from there.
    public init(factory: (any MetricsFactory)? = nil) {
        connectedGauge = factory.map { Gauge(label: "wearfleet_mqtt_connected", factory: $0) }
        publishedCounter = factory.map { Counter(label: "wearfleet_mqtt_published_total", factory: $0) }
        droppedCounter = factory.map { Counter(label: "wearfleet_mqtt_dropped_total", factory: $0) }
        reconnectCounter = factory.map { Counter(label: "wearfleet_mqtt_reconnects_total", factory: $0) }
        retainedFailureCounter = factory.map { Counter(label: "wearfleet_mqtt_retained_failures_total", factory: $0) }
        connectedGauge?.record(0)
    }

    /// Whether the broker accepted the current connection (CONNACK success).
    public var connected: Bool { connectedFlag.load(ordering: .relaxed) }
    /// Messages handed to libmosquitto for sending (QoS 0 values included).
    public var published: Int { publishedCount.load(ordering: .relaxed) }
    /// Non-retained messages dropped: the queue was full while the broker was away, or
    /// libmosquitto refused them.
    public var dropped: Int { droppedCount.load(ordering: .relaxed) }
    /// Connection attempts after the first (each one the broker was away for).
    public var reconnects: Int { reconnectCount.load(ordering: .relaxed) }

    func setConnected(_ value: Bool) {
        connectedFlag.store(value, ordering: .relaxed)
        connectedGauge?.record(value ? 1 : 0)
    }

    func addPublished(_ count: Int) {
        guard count > 0 else { return }
        publishedCount.add(count, ordering: .relaxed)
        publishedCounter?.increment(by: count)
    }

    func addDropped(_ count: Int) {
        guard count > 0 else { return }
        droppedCount.add(count, ordering: .relaxed)
        droppedCounter?.increment(by: count)
    }

    /// A retained message (state, discovery, deletion) libmosquitto refused: it stays in the
    /// outbox and is published again on the next connection (counted for Prometheus only).
    func addRetainedFailure() {
        retainedFailureCounter?.increment()
    }

    func addReconnect() {
        reconnectCount.add(1, ordering: .relaxed)
        reconnectCounter?.increment()
    }
}
