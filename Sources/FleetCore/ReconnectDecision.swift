/// What `ReconnectController` wants after a failure.
public enum ReconnectDecision: Hashable, Sendable {
    /// Try again at `at`. `attempt` counts consecutive failures (1 for the first retry);
    /// `rediscover` asks to find the device again before connecting (its object was gone).
    case retry(at: MonotonicInstant, attempt: Int, rediscover: Bool)
    /// Make no attempt before `until`, for `reason`.
    case suspend(until: MonotonicInstant, reason: SuspendReason)
    /// Stop retrying until someone asks for the device again (policy or restore).
    case giveUp(FailureClass)

    /// Why the controller stopped retrying for a while.
    public enum SuspendReason: Hashable, Sendable {
        /// The circuit breaker opened after repeated protocol failures.
        case circuitOpen
        /// The class's failure budget ran out.
        case budgetExhausted(FailureClass)
    }
}
