// The states name what the device is doing from the daemon's point of view; they are what logs
// (`DEVICE_STATE`) and metrics show, so each one is distinct for an operator.

/// Where one device stands. Changed only by `DeviceStateMachine.reduce`.
public enum DeviceState: Hashable, Sendable, Codable, CustomStringConvertible {
    /// Not wanted by the pool policy (or not started): no link, no attempts, no timers.
    case idle
    /// An intermittent device (a cuff, a scale) between its sessions: absent is its normal
    /// state. The daemon waits for it to wake — a `Device1.Connect` left pending (Linux connects
    /// by passive scanning the moment it advertises) when bluetoothd knows it, else a search —
    /// and counts no failure while it sleeps.
    case asleep
    /// Wanted, but bluetoothd has no object for the device: looking for it.
    case resolving
    /// Wanted and known to bluetoothd. `adapter == nil`: waiting for the fleet gate to grant an
    /// attempt; otherwise a `Device1.Connect` is in flight on that adapter.
    case connecting(adapter: AdapterID?)
    /// Linked: waiting for services, then reading and subscribing what the config asks for.
    case discovering
    /// Linked, bonding with the device (`Device1.Pair`, the daemon's agent answering): its class
    /// says it must bond, or a characteristic answered that it needs encryption.
    case pairing
    /// Linked, every required service present, every subscription enabled.
    case ready
    /// Linked and usable, but something non-fatal is wrong; there is a path back to `ready`.
    case degraded(DegradedReason)
    /// Waiting until `deadline` before retry number `attempt`.
    case backingOff(attempt: Int, deadline: MonotonicInstant)
    /// No attempts until the cause clears.
    case suspended(SuspendReason)

    /// A short, stable name for logs and metric labels.
    public var name: String {
        switch self {
        case .idle: "idle"
        case .asleep: "asleep"
        case .resolving: "resolving"
        case .connecting: "connecting"
        case .discovering: "discovering"
        case .pairing: "pairing"
        case .ready: "ready"
        case .degraded: "degraded"
        case .backingOff: "backingOff"
        case .suspended: "suspended"
        }
    }

    /// Every state's `name`, in the order they are declared (and documented).
    public static let names = [
        "idle", "asleep", "resolving", "connecting", "discovering", "pairing", "ready", "degraded", "backingOff", "suspended",
    ]

    public var description: String {
        switch self {
        case .connecting(let adapter?): "connecting(\(adapter))"
        case .degraded(let reason): "degraded(\(reason))"
        case .backingOff(let attempt, let deadline): "backingOff(attempt: \(attempt), deadline: \(deadline))"
        case .suspended(let reason): "suspended(\(reason))"
        default: name
        }
    }

    /// Whether the machine believes a BlueZ link is up.
    public var isLinked: Bool {
        switch self {
        case .discovering, .pairing, .ready, .degraded: true
        default: false
        }
    }
}

extension DeviceState {
    /// Given up for an operator, or cooling down from its budget or breaker: such a device keeps
    /// no place in the pool's plan — a slot held for it would stay empty for minutes or for good
    /// while another device waits (a wrong-passkey cuff kept a strap out on the real stack).
    public var isResting: Bool {
        switch self {
        case .suspended(.gaveUp), .suspended(.budgetExhausted), .suspended(.circuitOpen): true
        default: false
        }
    }
}
