import FleetCore

/// A device's metric figures as plain numbers, rendered into the exposition at each scrape by
/// `DeviceFamilies`. A thousand devices would otherwise hold some twenty swift-metrics series
/// each (~12 KB a device, a third of the daemon's memory at that size); these are ~1 KB.
///
/// Counters only grow while the record lives; the record is replaced (and its counters start
/// again) only when the device's identity labels change.
struct DeviceFigures: Sendable {
    var attemptsGranted = 0
    /// Connection attempts after the first.
    var reconnectAttempts: Int { max(0, attemptsGranted - 1) }
    var notifications = 0
    var decodeErrors = 0
    var writes: [OutgoingWriteType: Int] = [:]
    /// Per failure class, present from the class's first failure (a device that never fails
    /// does not carry nine zero series).
    var errors: [FailureClass: Int] = [:]
    var readyLatency = LatencyHistogram(bounds: FleetMetricCatalogue.readyLatencyBuckets.map(\.secondsDouble))
}
