import CoreMetrics
import FleetCore

/// A device's counters and ready-latency histogram, labelled by identity only: they live as long
/// as the device is in the fleet and never restart when it changes adapter.
struct DeviceCounters {
    let reconnectAttempts: Counter
    let notifications: Counter
    let decodeErrors: Counter
    let readyLatency: CoreMetrics.Timer
    let writes: [OutgoingWriteType: Counter]
    private(set) var errors: [FailureClass: Counter] = [:]
    private let labels: [(String, String)]
    private let factory: any MetricsFactory

    init(labels: DeviceLabels, factory: any MetricsFactory) {
        let identity = labels.identity
        self.labels = identity
        self.factory = factory
        reconnectAttempts = Counter(label: FleetMetricCatalogue.deviceReconnectAttempts.name, dimensions: identity, factory: factory)
        notifications = Counter(label: FleetMetricCatalogue.deviceNotifications.name, dimensions: identity, factory: factory)
        decodeErrors = Counter(label: FleetMetricCatalogue.deviceDecodeErrors.name, dimensions: identity, factory: factory)
        readyLatency = CoreMetrics.Timer(label: FleetMetricCatalogue.deviceReadyLatency.name, dimensions: identity, factory: factory)
        var writes: [OutgoingWriteType: Counter] = [:]
        for type in OutgoingWriteType.all {
            writes[type] = Counter(
                label: FleetMetricCatalogue.deviceWrites.name, dimensions: identity + [("type", type.metricLabel)], factory: factory)
        }
        self.writes = writes
    }

    /// The errors counter of `failureClass`, created at its first failure (a device that never
    /// fails does not carry nine zero series).
    mutating func errors(_ failureClass: FailureClass) -> Counter {
        if let counter = errors[failureClass] { return counter }
        let counter = Counter(
            label: FleetMetricCatalogue.deviceErrors.name, dimensions: labels + [("error_class", failureClass.rawValue)],
            factory: factory)
        errors[failureClass] = counter
        return counter
    }

    func destroy() {
        reconnectAttempts.destroy()
        notifications.destroy()
        decodeErrors.destroy()
        readyLatency.destroy()
        for counter in writes.values { counter.destroy() }
        for counter in errors.values { counter.destroy() }
    }
}

/// A device's gauges, labelled by identity and the adapter it uses now. When the adapter changes
/// the recorder destroys the whole set and makes a new one, so no stale series stays behind.
struct DeviceGauges {
    let adapter: String
    let states: [String: Gauge]
    let connectedSeconds: Gauge
    let backoffDeadline: Gauge
    let queueDepth: [OutgoingQoS: Gauge]
    private(set) var lastError: (errorClass: FailureClass, gauge: Gauge)?
    private let labels: [(String, String)]
    private let factory: any MetricsFactory

    init(labels: DeviceLabels, adapter: String, factory: any MetricsFactory) {
        let present = labels.present(adapter: adapter)
        self.adapter = adapter
        self.labels = present
        self.factory = factory
        var states: [String: Gauge] = [:]
        for state in DeviceState.metricNames {
            states[state] = Gauge(label: FleetMetricCatalogue.deviceState.name, dimensions: present + [("state", state)], factory: factory)
        }
        self.states = states
        connectedSeconds = Gauge(label: FleetMetricCatalogue.deviceConnectedSeconds.name, dimensions: present, factory: factory)
        backoffDeadline = Gauge(label: FleetMetricCatalogue.deviceBackoffDeadline.name, dimensions: present, factory: factory)
        var queueDepth: [OutgoingQoS: Gauge] = [:]
        for qos in OutgoingQoS.allCases {
            queueDepth[qos] = Gauge(
                label: FleetMetricCatalogue.deviceQueueDepth.name, dimensions: present + [("qos", qos.description)], factory: factory)
        }
        self.queueDepth = queueDepth
    }

    func setState(_ state: DeviceState) {
        for (name, gauge) in states { gauge.record(name == state.name ? 1.0 : 0.0) }
    }

    /// Shows `failureClass` at `timestamp` (Unix seconds), replacing the series of an earlier class.
    mutating func setLastError(_ failureClass: FailureClass, at timestamp: Double) {
        if let lastError, lastError.errorClass != failureClass {
            lastError.gauge.destroy()
            self.lastError = nil
        }
        if lastError == nil {
            let gauge = Gauge(
                label: FleetMetricCatalogue.deviceLastError.name, dimensions: labels + [("error_class", failureClass.rawValue)],
                factory: factory)
            lastError = (failureClass, gauge)
        }
        lastError?.gauge.record(timestamp)
    }

    func destroy() {
        for gauge in states.values { gauge.destroy() }
        connectedSeconds.destroy()
        backoffDeadline.destroy()
        for gauge in queueDepth.values { gauge.destroy() }
        lastError?.gauge.destroy()
    }
}
