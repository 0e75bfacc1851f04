// The pool is ranked by one number so that ties, hysteresis margins and logs all speak of the same
// quantity; the weights are configuration, not code.

/// Weights of the pool priority score:
/// `priority * configuredPriority + rssi * rssiDBm - recentFailures * recentFailureCount`.
///
/// Higher is better. A device that is reachable but has no RSSI reading is scored at
/// `unseenRSSI` dBm, the weakest signal BlueZ can report.
public struct PoolScoreWeights: Hashable, Sendable, Codable {
    public var priority: Double
    public var rssi: Double
    public var recentFailures: Double

    public init(priority: Double = 10, rssi: Double = 1, recentFailures: Double = 5) {
        self.priority = priority
        self.rssi = rssi
        self.recentFailures = recentFailures
    }

    /// The RSSI (dBm) assumed for a reachable device that no adapter currently reports a value for.
    public static let unseenRSSI = -127

    public func score(configuredPriority: Int, rssi: Int?, recentFailures: Int) -> Double {
        priority * Double(configuredPriority)
            + self.rssi * Double(rssi ?? Self.unseenRSSI)
            - self.recentFailures * Double(max(0, recentFailures))
    }
}
