import FleetCore

/// A device's metric figures as plain numbers, rendered into the exposition at each scrape by
/// `DeviceFamilies`, rather than some twenty swift-metrics series per device, which cost ten
/// times the memory at a thousand devices (figures: NOTES.md).
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
    /// Of `errors`, those the fleet afterwards put down to the adapter or bluetoothd
    /// (`failureWithdrawn`); present from the class's first one.
    var explainedErrors: [FailureClass: Int] = [:]
    var readyLatency = LatencyHistogram(bounds: FleetMetricCatalogue.readyLatencyBuckets.map(\.secondsDouble))
}
