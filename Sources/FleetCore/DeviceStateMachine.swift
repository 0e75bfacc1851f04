// Modelled on pure connection state machines that return actions: the owner (the runtime's
// DeviceActor) feeds every event here and executes the returned effects in order. Nothing here
// performs I/O, reads a clock or draws randomness it was not given.

/// The single authority for one device's state.
///
/// Guarantees:
/// - The machine never connects on its own: it asks the fleet gate (`requestAttempt`) and
///   connects only after `attemptGranted`; every granted attempt is answered by exactly one
///   `attemptFinished` (a grant it no longer wants is finished at once as `.cancelled`).
/// - Every operation that can hang (resolve, connect, service discovery, subscribe/read, write)
///   runs under a timer; a stale timer (wrong generation or disarmed) changes nothing.
/// - With `policyUpdated(wanted: false)` it releases everything it holds and stays `idle`.
/// - Once bluetoothd, a powered adapter and the device are available and the device is wanted,
///   every state leads back to `ready` (property-tested).
/// - Every state change is reported by a final `.emit(.stateChanged)` effect.
public struct DeviceStateMachine: Hashable, Sendable {
    public let device: DeviceID
    public var configuration: Configuration
    public internal(set) var state: DeviceState = .idle
    public internal(set) var reconnect: ReconnectController
    /// Numbers connection sessions (granted or adopted attempts) from 1; 0 before the first.
    public internal(set) var session: UInt64 = 0
    /// Whether the pool policy wants the device connected.
    public internal(set) var isWanted = false
    public internal(set) var bluetoothdPresent = false
    public internal(set) var poweredAdapters: Set<AdapterID> = []
    /// Whether bluetoothd currently has an object for the device, and under which adapter.
    public internal(set) var knownAdapter: AdapterID?
    /// What the state file holds (or will, once the emitted `persist` effects are executed).
    public internal(set) var servicesSeen: Set<String>
    public internal(set) var hasBeenReady: Bool

    /// Set after a `gone` failure: find the device again before the next connect.
    var needsRediscovery = false
    /// The adapter of the in-flight attempt or of the link.
    var linkAdapter: AdapterID?
    var link = LinkProgress()
    var armedTimers: [TimerKind: UInt64] = [:]
    var nextTimerGeneration: UInt64 = 1

    /// A machine in `idle`, knowing nothing of bluetoothd or adapters yet: the runtime feeds
    /// `bluetoothdAppeared`, `adapterPowered` and `deviceFound` as it learns them.
    /// `servicesSeen` and `hasBeenReady` come from the state file, if it knew the device.
    public init(
        device: DeviceID,
        configuration: Configuration = Configuration(),
        reconnectPolicy: ReconnectPolicy = ReconnectPolicy(),
        servicesSeen: Set<String> = [],
        hasBeenReady: Bool = false
    ) {
        self.device = device
        self.configuration = configuration
        self.reconnect = ReconnectController(policy: reconnectPolicy)
        self.servicesSeen = servicesSeen
        self.hasBeenReady = hasBeenReady
    }

    /// Feeds one event; returns what the owner must do, in order.
    public mutating func reduce(
        _ event: DeviceEvent,
        now: MonotonicInstant,
        random: inout some RandomNumberGenerator
    ) -> [DeviceEffect] {
        let before = state
        var effects: [DeviceEffect] = []
        switch event {
        case .adapterPowered(let adapter): adapterPowered(adapter, now: now, &effects)
        case .adapterUnpowered(let adapter): adapterUnpowered(adapter, now: now, &effects)
        case .bluetoothdAppeared: bluetoothdAppeared(now: now, &effects)
        case .bluetoothdVanished: bluetoothdVanished(now: now, &effects)
        case .deviceFound(let adapter): deviceFound(adapter, now: now, &effects)
        case .deviceLost: deviceLost(now: now, random: &random, &effects)
        case .attemptGranted(let adapter): attemptGranted(adapter, now: now, &effects)
        case .connected: connected(now: now, &effects)
        case .connectFailed(let failure): connectFailed(failure, now: now, random: &random, &effects)
        case .disconnected(let reason): disconnected(reason, now: now, random: &random, &effects)
        case .servicesResolved(let services, let characteristics):
            servicesResolved(services, characteristics, now: now, random: &random, &effects)
        case .notificationsEnabled(let characteristic): notificationsEnabled(characteristic, now: now, &effects)
        case .subscribeFailed(let characteristic, let failure):
            subscribeFailed(characteristic, failure, now: now, &effects)
        case .valueReceived(let characteristic): valueReceived(characteristic, now: now, &effects)
        case .readFailed(let characteristic, let failure): readFailed(characteristic, failure, now: now, &effects)
        case .writeStarted: writeStarted(now: now, &effects)
        case .writeCompleted: writeFinished(failure: nil, now: now, &effects)
        case .writeFailed(let failure): writeFinished(failure: failure, now: now, &effects)
        case .writeCreditAvailable: if state == .ready || isDegraded { effects.append(.resumeWrites) }
        case .timeout(let kind, let generation): timeout(kind, generation, now: now, random: &random, &effects)
        case .policyUpdated(let wanted): policyUpdated(wanted: wanted, now: now, &effects)
        case .restoreRequested: policyUpdated(wanted: true, now: now, &effects)
        case .reconnectRequested: reconnectRequested(now: now, &effects)
        case .subscriptionAdded(let characteristic): subscriptionAdded(characteristic, now: now, &effects)
        case .subscriptionRemoved(let characteristic): subscriptionRemoved(characteristic, now: now, &effects)
        }
        if state != before {
            let cause = effects.lazy.compactMap { effect -> FailureClass? in
                if case .emit(.failed(let failureClass, _, _)) = effect { failureClass } else { nil }
            }.first
            effects.append(.emit(.stateChanged(from: before, to: state, session: session, cause: cause)))
        }
        return effects
    }

    /// Whether a timer of `kind` is armed (for the owner's diagnostics and for tests).
    public func isArmed(_ kind: TimerKind) -> Bool { armedTimers[kind] != nil }

    var isDegraded: Bool {
        if case .degraded = state { return true }
        return false
    }
}

extension DeviceStateMachine {
    /// The functional form, `reduce(state, event) -> (state, [Effect])`, for callers that keep
    /// machines in immutable collections.
    public static func reduce(
        _ machine: DeviceStateMachine,
        _ event: DeviceEvent,
        now: MonotonicInstant,
        random: inout some RandomNumberGenerator
    ) -> (DeviceStateMachine, [DeviceEffect]) {
        var next = machine
        let effects = next.reduce(event, now: now, random: &random)
        return (next, effects)
    }
}
