import Testing
@testable import FleetCore

/// UUIDs of the standard heart-rate wearable the tests configure.
enum UUIDs {
    static let heartRateService = "0000180d-0000-1000-8000-00805f9b34fb"
    static let batteryService = "0000180f-0000-1000-8000-00805f9b34fb"
    static let heartRateMeasurement = "00002a37-0000-1000-8000-00805f9b34fb"
    static let batteryLevel = "00002a19-0000-1000-8000-00805f9b34fb"
    static let temperature = "00002a1c-0000-1000-8000-00805f9b34fb"
}

enum Failures {
    static let abortByRemote = DeviceEvent.Failure(name: "org.bluez.Error.Failed", message: "le-connection-abort-by-remote")
    static let slotLimit = DeviceEvent.Failure(name: "org.bluez.Error.Failed", message: "le-connection-concurrent-connection-limit")
    static let unknownObject = DeviceEvent.Failure(name: "org.freedesktop.DBus.Error.UnknownObject", message: "Method \"Connect\" doesn't exist")
    static let notAuthorized = DeviceEvent.Failure(name: "org.bluez.Error.NotAuthorized")
    static let remoteReason = DeviceEvent.Failure(name: "org.bluez.Reason.Remote", message: "Connection terminated by remote user")
    static let notSupported = DeviceEvent.Failure(name: "org.bluez.Error.NotSupported", message: "Operation is not supported")
    static let writeFailed = DeviceEvent.Failure(name: "org.bluez.Error.Failed", message: "Operation failed with ATT error: 0x0e")
    static let notPaired = DeviceEvent.Failure(name: "org.bluez.Error.Failed", message: "Operation failed with ATT error: 0x05")
    static let wrongKey = DeviceEvent.Failure(name: "org.bluez.Error.AuthenticationFailed", message: "Authentication Failed")
    static let pairingTimeout = DeviceEvent.Failure(name: "org.bluez.Error.AuthenticationTimeout", message: "Authentication Timeout")
    static let abortByLocal = DeviceEvent.Failure(name: "org.bluez.Error.Failed", message: "le-connection-abort-by-local")
}

/// Drives one `DeviceStateMachine` the way the runtime's DeviceActor does: feeds events at a
/// simulated time and fires the timers the machine armed.
struct DeviceHarness {
    static let hci0 = AdapterID("hci0")
    static let hci1 = AdapterID("hci1")

    /// A heart-rate strap: requires the heart-rate service and measurement, reads the battery on
    /// connect, subscribes to the measurement.
    static let strap = DeviceStateMachine.Configuration(
        requiredServices: [UUIDs.heartRateService],
        requiredCharacteristics: [UUIDs.heartRateMeasurement],
        readOnConnect: [UUIDs.batteryLevel],
        subscriptions: [UUIDs.heartRateMeasurement]
    )
    /// A blood-pressure cuff as the tests see it: the strap's GATT (the machine does not care
    /// which), but it must bond and it sleeps between measurements.
    static let cuff = DeviceStateMachine.Configuration(
        requiredServices: [UUIDs.heartRateService],
        requiredCharacteristics: [UUIDs.heartRateMeasurement],
        readOnConnect: [UUIDs.batteryLevel],
        subscriptions: [UUIDs.heartRateMeasurement],
        bond: true,
        intermittent: true,
        setTime: true
    )
    static let strapServices: Set<String> = [UUIDs.heartRateService, UUIDs.batteryService]
    static let strapCharacteristics: Set<String> = [UUIDs.heartRateMeasurement, UUIDs.batteryLevel]

    var machine: DeviceStateMachine
    var now = MonotonicInstant.zero
    var random = SeededRandom(seed: 7)
    /// Timer deadlines, learnt from the effects the way the runtime learns them.
    var deadlines: [DeviceStateMachine.TimerKind: MonotonicInstant] = [:]
    /// Whether the fleet gate holds a request from this device, learnt from the effects.
    var attemptRequested = false

    /// A machine whose environment is healthy (bluetoothd up, hci0 powered, device known to
    /// bluetoothd) but which nobody has asked for yet: `idle`.
    static func idle(
        configuration: DeviceStateMachine.Configuration = strap,
        policy: ReconnectPolicy = ReconnectPolicy(),
        deviceKnown: Bool = true
    ) throws -> DeviceHarness {
        let address = try #require(BluetoothAddress("C0:FF:EE:00:00:01"))
        var harness = DeviceHarness(machine: DeviceStateMachine(
            device: DeviceID(address: address, addressType: .random),
            configuration: configuration,
            reconnectPolicy: policy
        ))
        _ = harness.feed(.bluetoothdAppeared)
        _ = harness.feed(.adapterPowered(hci0))
        if deviceKnown { _ = harness.feed(.deviceFound(adapter: hci0)) }
        return harness
    }

    /// Wanted and waiting for the fleet gate.
    static func awaitingGrant(configuration: DeviceStateMachine.Configuration = strap, policy: ReconnectPolicy = ReconnectPolicy()) throws -> DeviceHarness {
        var harness = try idle(configuration: configuration, policy: policy)
        _ = harness.feed(.policyUpdated(wanted: true))
        return harness
    }

    /// A `Device1.Connect` in flight on hci0.
    static func connecting(configuration: DeviceStateMachine.Configuration = strap, policy: ReconnectPolicy = ReconnectPolicy()) throws -> DeviceHarness {
        var harness = try awaitingGrant(configuration: configuration, policy: policy)
        _ = harness.feed(.attemptGranted(adapter: hci0))
        return harness
    }

    /// Linked, waiting for services.
    static func discovering(configuration: DeviceStateMachine.Configuration = strap, policy: ReconnectPolicy = ReconnectPolicy()) throws -> DeviceHarness {
        var harness = try connecting(configuration: configuration, policy: policy)
        _ = harness.feed(.connected)
        return harness
    }

    /// Services resolved; the battery read and the measurement subscription are pending.
    static func settingUp(configuration: DeviceStateMachine.Configuration = strap, policy: ReconnectPolicy = ReconnectPolicy()) throws -> DeviceHarness {
        var harness = try discovering(configuration: configuration, policy: policy)
        _ = harness.feed(.servicesResolved(services: strapServices, characteristics: strapCharacteristics))
        return harness
    }

    static func ready(configuration: DeviceStateMachine.Configuration = strap, policy: ReconnectPolicy = ReconnectPolicy()) throws -> DeviceHarness {
        var harness = try settingUp(configuration: configuration, policy: policy)
        _ = harness.feed(.valueReceived(characteristic: UUIDs.batteryLevel))
        _ = harness.feed(.notificationsEnabled(characteristic: UUIDs.heartRateMeasurement))
        return harness
    }

    var state: DeviceState { machine.state }

    mutating func feed(_ event: DeviceEvent) -> [DeviceEffect] {
        let effects = machine.reduce(event, now: now, random: &random)
        if case .attemptGranted = event { attemptRequested = false }
        for effect in effects {
            switch effect {
            case .requestAttempt: attemptRequested = true
            case .withdrawAttemptRequest: attemptRequested = false
            case .scheduleTimer(let kind, _, let deadline): deadlines[kind] = deadline
            case .cancelTimer(let kind): deadlines[kind] = nil
            default: break
            }
        }
        return effects
    }

    mutating func advance(by duration: Duration) {
        now = now + duration
    }

    /// Moves the clock to the armed timer's deadline and fires it, as the runtime would.
    mutating func fire(_ kind: DeviceStateMachine.TimerKind) throws -> [DeviceEffect] {
        let generation = try #require(machine.armedTimers[kind], "no \(kind) timer armed")
        let due = try #require(self.deadline(of: kind), "no \(kind) deadline known")
        if due > now { now = due }
        return feed(.timeout(kind, generation: generation))
    }

    /// The deadline of the armed timer, as last scheduled.
    func deadline(of kind: DeviceStateMachine.TimerKind) -> MonotonicInstant? {
        machine.isArmed(kind) ? deadlines[kind] : nil
    }

    // MARK: - Expected effects

    /// The `scheduleTimer` effect the machine must just have emitted for `kind`, `after` from now.
    func scheduled(_ kind: DeviceStateMachine.TimerKind, after duration: Duration) -> DeviceEffect {
        scheduled(kind, at: now + duration)
    }

    func scheduled(_ kind: DeviceStateMachine.TimerKind, at deadline: MonotonicInstant) -> DeviceEffect {
        .scheduleTimer(kind, generation: machine.armedTimers[kind] ?? 0, deadline: deadline)
    }

    func changed(from: DeviceState, to: DeviceState, cause: FailureClass? = nil) -> DeviceEffect {
        .emit(.stateChanged(from: from, to: to, session: machine.session, cause: cause))
    }

    func failed(_ failureClass: FailureClass, _ error: DeviceEvent.Failure? = nil) -> DeviceEffect {
        .emit(.failed(failureClass, error: error, session: machine.session))
    }

    func persisted(connectedNow: Bool) -> DeviceEffect {
        .persist(DeviceEffect.StoreUpdate(
            servicesSeen: machine.servicesSeen.sorted(),
            hasBeenReady: machine.hasBeenReady,
            connectedNow: connectedNow
        ))
    }
}
