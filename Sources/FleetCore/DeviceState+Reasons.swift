extension DeviceState {
    /// Why a linked device is `degraded`.
    public enum DegradedReason: Hashable, Sendable, Codable {
        /// These characteristics could not be subscribed; retried every `recoveryInterval`.
        case subscriptionsIncomplete(missing: [String])
        /// `Configuration.writeFailureThreshold` writes in a row failed; the next successful
        /// write, or a `recoveryInterval` without another failure, restores `ready`.
        case writesFailing
    }

    /// Why a wanted device makes no attempts.
    public enum SuspendReason: Hashable, Sendable, Codable {
        /// bluetoothd is not on the bus. Clears on `bluetoothdAppeared`.
        case bluetoothdUnavailable
        /// No adapter is powered. Clears on `adapterPowered`.
        case noPoweredAdapter
        /// Repeated protocol failures opened the circuit breaker. At `until` one probe is allowed.
        case circuitOpen(until: MonotonicInstant)
        /// The class's failure budget ran out. Clears at `until`, or earlier when the device is
        /// found again.
        case budgetExhausted(FailureClass, until: MonotonicInstant)
        /// Retrying cannot help (e.g. pairing refused). Clears only when the device is requested
        /// again (`policyUpdated(wanted: true)` or `restoreRequested`).
        case gaveUp(FailureClass)
    }
}
