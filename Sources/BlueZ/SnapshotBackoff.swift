/// How long the BlueZ client waits before asking a bluetoothd that owns its name for its object
/// tree again: doubling from `initial` up to `maximum`, each delay shortened by up to `jitter`
/// of itself so that clients started together do not ask together.
public struct SnapshotBackoff: Sendable, Hashable {
    public var initial: Duration
    public var maximum: Duration
    /// 0…1: the largest part of a delay that is taken off at random.
    public var jitter: Double

    public init(initial: Duration = .milliseconds(250), maximum: Duration = .seconds(10), jitter: Double = 0.2) {
        self.initial = initial
        self.maximum = max(initial, maximum)
        self.jitter = min(max(jitter, 0), 1)
    }

    /// The wait after `failures` failed calls in a row (1: after the first).
    public func delay(afterFailures failures: Int, random: Double = Double.random(in: 0..<1)) -> Duration {
        let doublings = min(max(failures - 1, 0), 30)
        let full = min(initial * (1 << doublings), maximum)
        return full * (1 - jitter * min(max(random, 0), 1))
    }
}
