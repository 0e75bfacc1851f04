// Events are normalized: the runtime turns D-Bus signals, method replies and timer firings into
// these, so the machine never sees object paths, variants or BlueZ version differences.

/// Something that happened to or around one device, fed to `DeviceStateMachine.reduce`.
public enum DeviceEvent: Hashable, Sendable, Codable {
    // MARK: - Central (fed to every device)

    /// An adapter is powered (at startup for each powered adapter, then on changes).
    case adapterPowered(AdapterID)
    /// An adapter lost power or disappeared.
    case adapterUnpowered(AdapterID)
    /// bluetoothd owns its bus name (at startup, or after a restart).
    case bluetoothdAppeared
    /// bluetoothd left the bus: every BlueZ object and link is gone.
    case bluetoothdVanished

    // MARK: - Device

    /// bluetoothd has an object for the device (in the initial tree, or `InterfacesAdded`).
    case deviceFound(adapter: AdapterID)
    /// bluetoothd removed the device's object.
    case deviceLost
    /// `Device1.Connected` became true.
    case connected
    /// The link went down; `nil` when BlueZ gave no reason (before 5.83).
    case disconnected(Failure?)
    /// `Device1.Connect` returned an error.
    case connectFailed(Failure)
    /// `ServicesResolved` became true; these are the service and characteristic UUIDs present
    /// (lower-case 128-bit form).
    case servicesResolved(services: Set<String>, characteristics: Set<String>)
    /// A subscription (`StartNotify` or `AcquireNotify`) is active.
    case notificationsEnabled(characteristic: String)
    /// A subscription failed.
    case subscribeFailed(characteristic: String, Failure)
    /// A value arrived (a read-on-connect reply or a notification).
    case valueReceived(characteristic: String)
    /// A read-on-connect failed; non-fatal.
    case readFailed(characteristic: String, Failure)
    /// The runtime started a write for this device (so the machine can watch it for a hang).
    case writeStarted
    case writeCompleted
    case writeFailed(Failure)
    /// The write socket became writable again (fd path).
    case writeCreditAvailable

    // MARK: - Internal

    /// A timer the machine scheduled fired. Stale generations are ignored.
    case timeout(DeviceStateMachine.TimerKind, generation: UInt64)
    /// The fleet gate granted a connection attempt on `adapter`.
    case attemptGranted(adapter: AdapterID)
    /// Whether the pool policy wants the device connected; `false` is also eviction and stop.
    case policyUpdated(wanted: Bool)
    /// The state file lists the device as wanted (after a restart): pursue it as if requested.
    case restoreRequested

    // MARK: - Commands

    /// Someone asked for the device now: forget its failures (backoff, budgets, breaker, a
    /// give-up) and pursue it at once if it was waiting on them.
    case reconnectRequested
    /// Subscribe to `characteristic` from now on: at once on a set-up link, else at the next.
    case subscriptionAdded(characteristic: String)
    /// Stop notifications of `characteristic`: at once on a link, and on every later one.
    case subscriptionRemoved(characteristic: String)
}
