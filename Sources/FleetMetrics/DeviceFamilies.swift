import FleetCore

/// One family's samples, rendered by the recorder rather than held as swift-metrics series.
struct RenderedFamily {
    let family: MetricFamily
    var lines: [[UInt8]] = []
}

/// Renders the per-device families (`wearfleet_device_*`) from the recorder's records, with the
/// labels `FleetMetricCatalogue` documents: identity labels on counters and the histogram;
/// identity plus the current `adapter` on gauges.
enum DeviceFamilies {
    /// The ready-latency buckets' `le` labels (`+Inf` last), spelled once rather than per device
    /// per scrape: every device's histogram has the catalogue's bounds.
    private static let bucketLabels = DeviceFigures().readyLatency.cumulative.map { ExpositionSample.value($0.bound) }

    /// - Parameters:
    ///   - now: the recorder's clock, for the seconds a link has been up.
    ///   - wallNow: Unix time, for the backoff deadline's timestamp.
    static func render(_ records: [FleetMetricsRecorder.DeviceRecord], now: MonotonicInstant, wallNow: Double) -> [RenderedFamily] {
        typealias Catalogue = FleetMetricCatalogue
        var state = RenderedFamily(family: Catalogue.deviceState)
        var connected = RenderedFamily(family: Catalogue.deviceConnectedSeconds)
        var backoff = RenderedFamily(family: Catalogue.deviceBackoffDeadline)
        var queueDepth = RenderedFamily(family: Catalogue.deviceQueueDepth)
        var lastError = RenderedFamily(family: Catalogue.deviceLastError)
        var lastValue = RenderedFamily(family: Catalogue.deviceLastValue)
        var latency = RenderedFamily(family: Catalogue.deviceReadyLatency)
        var reconnects = RenderedFamily(family: Catalogue.deviceReconnectAttempts)
        var writes = RenderedFamily(family: Catalogue.deviceWrites)
        var notifications = RenderedFamily(family: Catalogue.deviceNotifications)
        var decodeErrors = RenderedFamily(family: Catalogue.deviceDecodeErrors)
        var errors = RenderedFamily(family: Catalogue.deviceErrors)
        var explainedErrors = RenderedFamily(family: Catalogue.deviceExplainedErrors)

        for record in records {
            let identity = record.labels.identity
            let present = record.labels.present(adapter: record.adapter?.name ?? "")
            let figures = record.figures
            let current = record.state.name
            for name in DeviceState.metricNames {
                state.lines.append(ExpositionSample.line(state.family.name, present + [("state", name)], name == current ? "1" : "0"))
            }
            let connectedSeconds = max(0, record.linkedSince.map { now.duration(since: $0).secondsDouble } ?? 0)
            var backoffDeadline = 0.0
            if case .backingOff(_, let deadline) = record.state { backoffDeadline = wallNow + deadline.duration(since: now).secondsDouble }
            connected.lines.append(ExpositionSample.line(connected.family.name, present, ExpositionSample.value(connectedSeconds)))
            backoff.lines.append(ExpositionSample.line(backoff.family.name, present, ExpositionSample.value(backoffDeadline)))
            for qos in OutgoingQoS.allCases {
                queueDepth.lines.append(ExpositionSample.line(
                    queueDepth.family.name, present + [("qos", qos.description)], ExpositionSample.value(record.queueDepths[qos] ?? 0)))
            }
            if let last = record.lastError {
                lastError.lines.append(ExpositionSample.line(
                    lastError.family.name, present + [("error_class", last.errorClass.rawValue)], ExpositionSample.value(last.timestamp)))
            }
            if let last = record.lastValueTimestamp {
                lastValue.lines.append(ExpositionSample.line(lastValue.family.name, present, ExpositionSample.value(last)))
            }
            let histogram = figures.readyLatency
            for (label, bucket) in zip(bucketLabels, histogram.cumulative) {
                latency.lines.append(ExpositionSample.line(
                    latency.family.name + "_bucket", identity + [("le", label)], ExpositionSample.value(bucket.count)))
            }
            latency.lines.append(ExpositionSample.line(latency.family.name + "_sum", identity, ExpositionSample.value(histogram.sum)))
            latency.lines.append(ExpositionSample.line(latency.family.name + "_count", identity, ExpositionSample.value(histogram.count)))
            reconnects.lines.append(ExpositionSample.line(reconnects.family.name, identity, ExpositionSample.value(figures.reconnectAttempts)))
            for type in OutgoingWriteType.all {
                writes.lines.append(ExpositionSample.line(
                    writes.family.name, identity + [("type", type.metricLabel)], ExpositionSample.value(figures.writes[type] ?? 0)))
            }
            notifications.lines.append(ExpositionSample.line(notifications.family.name, identity, ExpositionSample.value(figures.notifications)))
            decodeErrors.lines.append(ExpositionSample.line(decodeErrors.family.name, identity, ExpositionSample.value(figures.decodeErrors)))
            for (failureClass, count) in figures.errors {
                errors.lines.append(ExpositionSample.line(
                    errors.family.name, identity + [("error_class", failureClass.rawValue)], ExpositionSample.value(count)))
            }
            for (failureClass, count) in figures.explainedErrors {
                explainedErrors.lines.append(ExpositionSample.line(
                    explainedErrors.family.name, identity + [("error_class", failureClass.rawValue)], ExpositionSample.value(count)))
            }
        }
        return [
            state, connected, backoff, queueDepth, lastError, lastValue, latency, reconnects, writes, notifications, decodeErrors, errors,
            explainedErrors,
        ]
    }
}
