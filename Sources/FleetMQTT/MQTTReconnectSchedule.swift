import FleetCore

/// When the client tries the broker again: jittered exponential backoff (FleetCore's
/// `ReconnectController.backoffDelay`, equal jitter) from `baseDelay` up to `maxDelay`, reset by
/// a connection that the broker accepted. Pure: the clock's readings and the random source are
/// the caller's.
public struct MQTTReconnectSchedule: Sendable {
    private let controller: ReconnectController
    /// Failed attempts since the last accepted connection.
    public private(set) var failures = 0

    public init(baseDelay: Duration = .milliseconds(500), maxDelay: Duration = .seconds(60)) {
        controller = ReconnectController(
            policy: ReconnectPolicy(baseDelay: baseDelay, maxDelay: maxDelay, multiplier: 2, jitterFraction: 0.5))
    }

    public var baseDelay: Duration { controller.policy.baseDelay }
    public var maxDelay: Duration { controller.policy.maxDelay }

    /// An attempt failed, or an accepted connection was lost: the next attempt is due at the
    /// returned instant.
    public mutating func failed(at now: MonotonicInstant, random: inout some RandomNumberGenerator) -> MonotonicInstant {
        failures += 1
        return now.advanced(by: controller.backoffDelay(attempt: failures, random: &random))
    }

    /// The broker accepted the connection: the next loss starts again from `baseDelay`.
    public mutating func connected() {
        failures = 0
    }
}
