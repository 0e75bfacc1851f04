/// Why a device that wants a connection attempt did not get one in this evaluation. Reported so
/// that logs and metrics can say what the fleet is waiting for.
public enum AttemptSuppression: Hashable, Sendable {
    case engineStopped
    case bluetoothdGone
    /// Every adapter that reaches the device is powered off.
    case adapterOff
    case notEligible
    case restoreInProgress
    /// No adapter sees the device or knows how to connect it.
    case unreachable
    /// The plan has no slot for it: pinned devices or higher-ranked pool devices fill them.
    case notSelected
    /// Its target adapter already has an attempt in flight.
    case adapterBusy(AdapterID)
    /// Its target adapter's slots are still held (for example by a device being evicted).
    case slotsHeld(AdapterID)
    /// Granting would exceed `maxConnections` (pool devices only).
    case maxConnections
    /// The fleet-wide token bucket is empty.
    case rateLimited
}
