extension DeviceStateMachine {
    /// The timers a device owns. The runtime keeps at most one timer per kind per device:
    /// scheduling a kind replaces any earlier one of the same kind.
    public enum TimerKind: String, Hashable, Sendable, CaseIterable {
        /// Bounds the search for a device bluetoothd does not know.
        case resolve
        /// Bounds one `Device1.Connect`.
        case connect
        /// Bounds the wait for `ServicesResolved`.
        case discovery
        /// Bounds reads-on-connect and subscriptions.
        case subscribe
        /// Bounds the oldest outstanding write.
        case write
        /// Ends a backoff.
        case backoff
        /// Ends a timed suspension (breaker cooldown, budget cooldown).
        case suspension
        /// Retries missing subscriptions while degraded.
        case recovery
    }
}
