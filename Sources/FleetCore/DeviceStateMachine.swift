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
/// - bluetoothd and the adapters are never the device's failure: losing them records none, and
///   a failure the fleet afterwards puts down to them (`linkLossExplained`) is taken back, if it
///   is still the latest and nothing happened since.
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
    /// The most recent failure while the fleet may still put it down to its adapter or
    /// bluetoothd (`linkLossExplained`): what recording it changed, so that it can be taken back.
    /// nil when the most recent failure cannot be explained so.
    var explainableFailure: ExplainableFailure?
    /// Set when an attempt lost the device's object before its link came up; cleared by a link,
    /// a recorded failure, an operator's reconnect, bluetoothd leaving or the device no longer
    /// being wanted.
    /// bluetoothd keeps a device it was asked to connect (`connect_profiles` in `src/device.c`
    /// makes it permanent before it tries), so such a loss means the object expired (or was
    /// removed) before our `Connect` reached it: the device did nothing wrong, and the first such
    /// loss only sends it back to be found. A second one in a row is a `gone` failure, so an
    /// object that keeps vanishing under our attempts is paced by the reconnect backoff.
    var objectLostBeforeLink = false
    /// Whether bluetoothd says the device is paired (`Device1.Paired`), as the runtime last
    /// reported it.
    public internal(set) var isPaired = false
    /// An intermittent device's wait while `asleep`.
    public internal(set) var standby = Standby.none
    /// bluetoothd holds this daemon's notify sessions for the device's subscriptions (set up on
    /// an earlier link, or asked for while asleep): they are enabled on the next link by
    /// bluetoothd itself. Forgotten with bluetoothd and with the device's object.
    var sessionsHeld = false
    /// The adapter of the in-flight attempt or of the link.
    public internal(set) var linkAdapter: AdapterID?
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
        case .pairedChanged(let paired):
            isPaired = paired
            // A bonding that succeeded is no failed one, whatever ends the link next.
            if paired { link.keyGiven = false }
            if paired, state == .asleep { subscribeWhileAsleep(&effects) }
        case .pairingKeyGiven: if state.isLinked { link.keyGiven = true }
        case .pairingSucceeded: pairingSucceeded(now: now, &effects)
        case .pairingFailed(let failure): pairingFailed(failure, now: now, random: &random, &effects)
        case .clockWritten: clockWritten(now: now, &effects)
        case .clockWriteFailed(let failure): clockWriteFailed(failure, now: now, &effects)
        case .attemptGranted(let adapter): attemptGranted(adapter, now: now, &effects)
        case .connected: connected(now: now, &effects)
        case .connectFailed(let failure): connectFailed(failure, now: now, random: &random, &effects)
        case .connectNeedsDiscovery: connectNeedsDiscovery(now: now, &effects)
        case .disconnected(let reason): disconnected(reason, now: now, random: &random, &effects)
        case .linkLossExplained(let adapter, let cause): linkLossExplained(adapter, cause: cause, now: now, &effects)
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

// MARK: -

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
    /// `Device1.Paired`, when first known and on every change.
    case pairedChanged(Bool)
    /// bluetoothd asked the daemon's pairing agent for the device's passkey and got it: a
    /// bonding is under way, the machine's own (`pair`) or one bluetoothd started itself (a
    /// device that asks for security as it connects).
    case pairingKeyGiven
    /// The `pair` effect's `Device1.Pair` succeeded (or bluetoothd answered that the device is
    /// bonded already).
    case pairingSucceeded
    /// The `pair` effect's `Device1.Pair` failed.
    case pairingFailed(Failure)
    /// The `writeCurrentTime` effect's write succeeded.
    case clockWritten
    /// The `writeCurrentTime` effect's write failed.
    case clockWriteFailed(Failure)
    /// `Device1.Connected` became true.
    case connected
    /// The link went down; `nil` when BlueZ gave no reason (before 5.83).
    case disconnected(Failure?)
    /// The fleet learned what ended the link (or the attempt at one) this device lost last on
    /// `adapter`: the adapter powered off, or bluetoothd left, within
    /// `FleetStateMachine.linkLossCauseWindow` of a loss BlueZ gave no reason for (or of a
    /// failed attempt). Not the device's failure: the failure recorded for it is taken back,
    /// unless something newer happened since (see `DeviceStateMachine+ExplainedLoss`).
    case linkLossExplained(adapter: AdapterID, cause: FleetEvent.LinkLossCause)
    /// `Device1.Connect` returned an error.
    case connectFailed(Failure)
    /// The granted adapter holds no object for the device and cannot connect to it by address
    /// (bluetoothd offers no `Adapter1.ConnectDevice` without `--experimental`): the device must
    /// be found by discovery first. Not the device's failure: nothing is counted.
    case connectNeedsDiscovery
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

// MARK: -

// BlueZ reports failures as a D-Bus error name plus a free-text message, and (since 5.83) link
// loss as a `Device1.Disconnected(reason, message)` signal. Both travel to the state machine with
// their kind parsed once (`BlueZErrorKind`) and their raw name and text kept, so that
// classification happens in exactly one place: `BlueZErrorClassifier`.

extension DeviceEvent {
    /// A failure as BlueZ reported it, before classification.
    ///
    /// `kind` is what the name means; `name` is the D-Bus error name
    /// (`org.bluez.Error.Failed`, `org.freedesktop.DBus.Error.UnknownObject`) or disconnect
    /// reason (`org.bluez.Reason.Remote`) exactly as received, and `message` the accompanying text
    /// (`le-connection-abort-by-remote`), empty when BlueZ sent none. Name and text are kept
    /// verbatim so logs can show `BLUEZ_ERROR` as received.
    public struct Failure: Hashable, Sendable, Codable, CustomStringConvertible {
        public var kind: BlueZErrorKind
        public var name: String
        public var message: String

        /// A failure whose kind is already known (a `BlueZError` carries one).
        public init(kind: BlueZErrorKind, name: String, message: String = "") {
            self.kind = kind
            self.name = name
            self.message = message
        }

        /// A failure by its received name; the kind is parsed from it.
        public init(name: String, message: String = "") {
            self.init(kind: BlueZErrorKind(dbusName: name), name: name, message: message)
        }

        /// A failure the runtime reports itself, under the kind's own name.
        public init(_ kind: BlueZErrorKind, message: String = "") {
            self.init(kind: kind, name: kind.dbusName, message: message)
        }

        public var description: String { message.isEmpty ? name : "\(name): \(message)" }
    }
}

// MARK: -

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
    /// A pending `Connect` (`AttemptOutcome.standing`) on `adapter` ended without a link: its
    /// slot is free again.
    case standingEnded(adapter: AdapterID)

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
    /// Bond with the device (`Device1.Pair`, the daemon's agent answering); the result comes
    /// back as `pairingSucceeded` or `pairingFailed`.
    case pair
    /// Write the gateway's current time to the device's Current Time characteristic (a write
    /// with response); the result comes back as `clockWritten` or `clockWriteFailed`.
    case writeCurrentTime

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
        /// An intermittent device's pending `Connect` was sent: it waits for the device to wake,
        /// holding a slot on the adapter (`PoolLinkStatus.standing`) until `standingEnded`.
        case standing
        case failed(FailureClass)
        /// Withdrawn by us (no longer wanted, bluetoothd or adapter gone, connect timeout).
        case cancelled
    }
}

// MARK: -

extension DeviceEffect {
    /// A structured event for journald fields (`DEVICE_STATE`, `SESSION_ID`, `ERROR_CLASS`,
    /// `BLUEZ_ERROR`) and metrics. `session` numbers connection attempts of this device from 1;
    /// 0 means no attempt has been granted yet.
    public enum LifecycleEvent: Hashable, Sendable, Codable {
        /// The state changed; always the last effect of the reduce call that changed it.
        /// `cause` is the class of the failure that made it change, nil when no failure did.
        case stateChanged(from: DeviceState, to: DeviceState, session: UInt64, cause: FailureClass?)
        /// An attempt or a link failed. `error` is BlueZ's report when there was one (nil for our
        /// own timeouts and for missing services).
        case failed(FailureClass, error: Failure?, session: UInt64)
        /// A non-fatal problem on a linked device (a subscription or read-on-connect failed).
        case setupProblem(characteristic: String, error: Failure?, session: UInt64)
        /// The failure `failed` reported last (of this class, in `session`) was taken back: the
        /// fleet put it down to `cause` (its adapter powering off, or bluetoothd leaving), so it
        /// counts against no budget, backoff or breaker. It was reported all the same: a
        /// consumer that counts failures counts this one as explained, and one that shows the
        /// last failure shows the one before it again.
        case failureWithdrawn(FailureClass, cause: FleetEvent.LinkLossCause, session: UInt64)

        public typealias Failure = DeviceEvent.Failure
    }
}

// MARK: -

extension DeviceEffect {
    /// What the state file should now hold for the device. The runtime stamps wall-clock time
    /// itself (FleetCore only has monotonic time, which does not survive a reboot).
    public struct StoreUpdate: Hashable, Sendable, Codable {
        /// Every service UUID ever seen on the device, sorted.
        public var servicesSeen: [String]
        /// Whether the device has ever reached `ready`.
        public var hasBeenReady: Bool
        /// The device just reached `ready`: record "last connected" as now.
        public var connectedNow: Bool

        public init(servicesSeen: [String], hasBeenReady: Bool, connectedNow: Bool) {
            self.servicesSeen = servicesSeen
            self.hasBeenReady = hasBeenReady
            self.connectedNow = connectedNow
        }
    }
}
