extension ReconnectController {
    /// The circuit breaker for protocol failures.
    public enum Breaker: Hashable, Sendable {
        /// Attempts flow normally.
        case closed
        /// No attempts before `until`.
        case open(until: MonotonicInstant)
        /// The cooldown passed; one probe attempt is under way. Reaching ready closes the breaker,
        /// another protocol failure reopens it with a longer cooldown, and any other failure
        /// leaves it half-open (the probe did not get far enough to test the protocol).
        case halfOpen
    }
}
