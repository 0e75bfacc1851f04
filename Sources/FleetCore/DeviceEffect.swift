// Effects are intents, not calls: the runtime's DeviceActor executes them in order against BlueZ,
// the fleet gate and the state store. Keeping them data is what makes the machine testable.

/// Something the owner of a `DeviceStateMachine` must do, in the order returned.
public enum DeviceEffect: Hashable, Sendable, Codable {
    // MARK: - Finding the device

    /// Look for the device (discovery with a filter on its address) until it is found.
    case startResolve
    /// Stop looking (found, given up, or no longer wanted).
    case stopResolve

    // MARK: - Fleet gate

    /// Ask the fleet gate for a connection attempt; it answers later with `attemptGranted`.
    case requestAttempt
    /// A requested attempt is no longer wanted; drop it from the gate's queue.
    case withdrawAttemptRequest
    /// The granted attempt on `adapter` is over: release its in-flight slot.
    case attemptFinished(adapter: AdapterID, outcome: AttemptOutcome)

    // MARK: - Link

    /// `Device1.Connect` through `adapter`.
    case connect(adapter: AdapterID)
    /// Abort the in-flight connect (`Device1.Disconnect` cancels a pending connect).
    case cancelConnect
    /// `Device1.Disconnect`.
    case disconnect
    /// Wait for `ServicesResolved` and report the GATT tree with `servicesResolved`.
    case awaitServices
    /// Read a characteristic once; the value comes back as `valueReceived`.
    case read(characteristic: String)
    /// Subscribe to a characteristic; the result comes back as `notificationsEnabled` or
    /// `subscribeFailed`.
    case subscribe(characteristic: String, via: NotifyPath)
    case unsubscribe(characteristic: String, via: NotifyPath)
    /// Writes may proceed: the owner asks the outgoing scheduler for the next one.
    case resumeWrites

    // MARK: - Timers, storage, reporting

    /// Arm `kind` to fire at `deadline` (replacing any armed timer of that kind), then feed
    /// `.timeout(kind, generation:)`.
    case scheduleTimer(DeviceStateMachine.TimerKind, generation: UInt64, deadline: MonotonicInstant)
    /// Disarm `kind`. A timeout already in flight is harmless: its generation is stale.
    case cancelTimer(DeviceStateMachine.TimerKind)
    /// Something the state file stores changed.
    case persist(StoreUpdate)
    /// A structured lifecycle event for logs and metrics.
    case emit(LifecycleEvent)

    /// How notifications are delivered.
    public enum NotifyPath: Hashable, Sendable, Codable {
        /// `StartNotify` and `PropertiesChanged` on the bus.
        case startNotify
        /// `AcquireNotify`: a socket per characteristic, off the bus.
        case acquireNotify
    }

    /// How a granted attempt ended, so the fleet gate can rate-limit per adapter.
    public enum AttemptOutcome: Hashable, Sendable, Codable {
        case connected
        case failed(FailureClass)
        /// Withdrawn by us (no longer wanted, bluetoothd or adapter gone, connect timeout).
        case cancelled
    }
}
