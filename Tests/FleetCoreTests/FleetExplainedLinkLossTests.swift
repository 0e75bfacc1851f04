import Testing
@testable import FleetCore

/// The fleet machine and the strap's real device machine together, as the executor runs them:
/// a link lost without a reason, or an attempt failed, right before its adapter powers off or
/// bluetoothd leaves costs the device nothing (budget, backoff, breaker, last failure), and the
/// device connects again as soon as its adapter or bluetoothd is back.
@Suite("Fleet and device: a link loss the fleet explains")
struct FleetExplainedLinkLossTests {
    static let hci0 = FleetStateMachineTests.hci0
    static let hci1 = FleetStateMachineTests.hci1
    static let strap = FleetStateMachineTests.strap

    static func on(_ adapter: AdapterID, connected: Bool = false) -> [FleetStateMachine.DeviceObject] {
        [FleetStateMachine.DeviceObject(adapter: adapter, connected: connected)]
    }

    static func withdrawals(_ events: [FleetEvent]) -> [DeviceEffect.LifecycleEvent] {
        events.compactMap { if case .lifecycle(_, let event, _, _) = $0, case .failureWithdrawn = event { event } else { nil } }
    }

    static func failures(_ events: [FleetEvent]) -> [FailureClass] {
        events.compactMap { if case .lifecycle(_, .failed(let failureClass, _, _), _, _) = $0 { failureClass } else { nil } }
    }

    static func linkLossCauses(_ events: [FleetEvent]) -> [FleetEvent] {
        events.filter { if case .linkLossExplained = $0 { true } else { false } }
    }

    // MARK: - Links

    @Test func aReasonlessLossThenItsAdapterPoweringOffCostsTheDeviceNothing() throws {
        var world = ExplainedLossWorld(adapters: [Self.hci0])
        try world.linkUp(on: Self.hci0)
        world.advance(by: .seconds(5))
        let reconnectBefore = try world.machine().reconnect

        world.report(.device(Self.strap, .disconnected(nil), objects: Self.on(Self.hci0)))
        #expect(Self.failures(world.published) == [.transient], "recorded at once, as any reasonless loss")
        guard case .backingOff = try world.machine().state else {
            Issue.record("expected a backoff, got \(try world.machine().state)")
            return
        }
        world.advance(by: .milliseconds(40))
        // BlueZ 5.66 after SIGTERM: `Powered` false only after the links' ends.
        world.report(.adapterChanged(Self.hci0, powered: false), .adapterPowerChanged(Self.hci0, powered: false))

        let machine = try world.machine()
        #expect(machine.reconnect == reconnectBefore, "budget, backoff step and breaker as before the loss")
        #expect(world.fleet.devices[Self.strap]?.lastFailure == nil, "the last error is what it was before")
        #expect(machine.state == .suspended(.noPoweredAdapter))
        #expect(!machine.isArmed(.backoff))
        #expect(Self.linkLossCauses(world.published).count == 1, "the journal's link_loss_cause, as before")
        #expect(Self.withdrawals(world.published) == [.failureWithdrawn(.transient, cause: .adapterPoweredOff, session: 1)])

        // The adapter comes back long after any backoff would have ended: the Connect goes out
        // at that very instant.
        world.advance(by: .seconds(20))
        let connectsBefore = world.connects.count
        world.report(.adapterChanged(Self.hci0, powered: true), .adapterPowerChanged(Self.hci0, powered: true))
        #expect(world.connects.count == connectsBefore + 1)
        #expect(world.connects.last?.at == world.now)
        #expect(world.connects.last?.adapter == Self.hci0)
    }

    /// Seen on the real stack under load: the loss's first retry (250 ms later) failed on the
    /// same adapter before `Powered` false was heard. Both are the power-off's: the device keeps
    /// neither failure, and its last error is what it was before the loss.
    @Test func aLossAndItsFirstRetryFailedBeforeThePowerOffWasHeardCostNothing() throws {
        var world = ExplainedLossWorld(adapters: [Self.hci0])
        try world.linkUp(on: Self.hci0)
        world.advance(by: .seconds(5))
        let reconnectBefore = try world.machine().reconnect
        world.report(.device(Self.strap, .disconnected(nil), objects: Self.on(Self.hci0)))
        let connectsBefore = world.connects.count
        world.advance(by: .milliseconds(300))
        #expect(world.connects.count == connectsBefore + 1, "the fast first retry is in flight")
        world.transportReports(.connectFailed(DeviceEvent.Failure(name: "org.bluez.Error.Failed", message: "le-connection-abort-by-local")))
        #expect(Self.failures(world.published) == [.transient, .transient])
        #expect(world.fleet.devices[Self.strap]?.recentFailures == 1, "the failed attempt (a lost link is not in the pool's score)")
        world.advance(by: .milliseconds(20))
        world.report(.adapterChanged(Self.hci0, powered: false), .adapterPowerChanged(Self.hci0, powered: false))

        let machine = try world.machine()
        #expect(Self.withdrawals(world.published).count == 2)
        #expect(machine.reconnect == reconnectBefore, "budget, backoff step and breaker as before the loss")
        #expect(world.fleet.devices[Self.strap]?.recentFailures == 0, "the pool's score counts neither")
        #expect(world.fleet.devices[Self.strap]?.lastFailure == nil, "the last error is what it was before the loss")
        #expect(machine.state == .suspended(.noPoweredAdapter))
    }

    @Test func aReasonlessLossNotFollowedByAPowerOffWithinTheWindowStaysAFailure() throws {
        var world = ExplainedLossWorld(adapters: [Self.hci0])
        try world.linkUp(on: Self.hci0)
        world.advance(by: .seconds(5))
        world.report(.device(Self.strap, .disconnected(nil), objects: Self.on(Self.hci0)))
        // The fast first retry goes out; its Connect is still pending when the power-off comes,
        // past the window.
        world.advance(by: FleetStateMachine.linkLossCauseWindow + .milliseconds(500))
        world.report(.adapterChanged(Self.hci0, powered: false), .adapterPowerChanged(Self.hci0, powered: false))

        let machine = try world.machine()
        #expect(machine.reconnect.consecutiveFailures == 1)
        #expect(machine.reconnect.failuresByClass == [.transient: 1])
        #expect(world.fleet.devices[Self.strap]?.lastFailure == .transient)
        #expect(Self.withdrawals(world.published).isEmpty)
        #expect(Self.linkLossCauses(world.published).isEmpty)
        // The pending Connect ended with the adapter: no failure of its own.
        #expect(Self.failures(world.published) == [.transient])
        #expect(machine.state == .suspended(.noPoweredAdapter))
    }

    /// With a second adapter powered, the device does not wait out a backoff the loss never
    /// deserved: it is granted an attempt on the other adapter right away.
    @Test func withAnotherAdapterTheDeviceMovesThereWithoutBackingOff() throws {
        var world = ExplainedLossWorld(adapters: [Self.hci0, Self.hci1])
        try world.linkUp(on: Self.hci0)
        world.advance(by: .seconds(5))
        let objects = [FleetStateMachine.DeviceObject(adapter: Self.hci0), FleetStateMachine.DeviceObject(adapter: Self.hci1)]
        world.report(.device(Self.strap, .disconnected(nil), objects: objects))
        world.advance(by: .milliseconds(10))
        let connectsBefore = world.connects.count
        world.report(.adapterChanged(Self.hci0, powered: false), .adapterPowerChanged(Self.hci0, powered: false))
        #expect(world.connects.count == connectsBefore + 1)
        #expect(world.connects.last?.adapter == Self.hci1)
        #expect(world.connects.last?.at == world.now)
        #expect(try world.machine().reconnect.consecutiveFailures == 0)
    }

    @Test func aReasonlessLossThenBluetoothdLeavingCostsNothingAndTheDeviceConnectsWhenItReturns() throws {
        var world = ExplainedLossWorld(adapters: [Self.hci0])
        try world.linkUp(on: Self.hci0)
        world.advance(by: .seconds(5))
        let reconnectBefore = try world.machine().reconnect
        world.report(.device(Self.strap, .disconnected(nil), objects: Self.on(Self.hci0)))
        world.advance(by: .milliseconds(5))
        // The translator's order: every powered adapter removed, then bluetoothd vanished.
        world.report(.adapterRemoved(Self.hci0), .bluetoothdVanished)
        #expect(try world.machine().reconnect == reconnectBefore)
        #expect(try world.machine().state == .suspended(.bluetoothdUnavailable))
        #expect(world.fleet.devices[Self.strap]?.lastFailure == nil)
        #expect(Self.withdrawals(world.published) == [.failureWithdrawn(.transient, cause: .bluetoothdGone, session: 1)])

        world.advance(by: .seconds(10))
        let connectsBefore = world.connects.count
        world.report(.bluetoothdAppeared(held: [Self.strap], adapters: [Self.hci0], powered: [Self.hci0]))
        world.report(.device(Self.strap, .deviceFound(adapter: Self.hci0), objects: Self.on(Self.hci0)))
        #expect(world.connects.count == connectsBefore + 1)
        #expect(world.connects.last?.at == world.now)
    }

    // MARK: - Attempts

    /// The Connect's error reply overtakes the news of the power-off that caused it: the
    /// failure is recorded, then taken back when the power-off arrives.
    @Test func aConnectFailedJustBeforeItsAdapterPoweredOffIsTakenBack() throws {
        var world = ExplainedLossWorld(adapters: [Self.hci0])
        world.advance(by: .seconds(1))
        #expect(world.connects.count == 1, "the first attempt is in flight")
        let abort = DeviceEvent.Failure(name: "org.bluez.Error.Failed", message: "le-connection-abort-by-local")
        world.transportReports(.connectFailed(abort))
        #expect(world.fleet.devices[Self.strap]?.recentFailures == 1)
        #expect(world.fleet.devices[Self.strap]?.lastFailure == .transient)
        world.advance(by: .milliseconds(3))
        world.report(.adapterChanged(Self.hci0, powered: false), .adapterPowerChanged(Self.hci0, powered: false))

        let machine = try world.machine()
        #expect(machine.reconnect.consecutiveFailures == 0 && machine.reconnect.failuresByClass.isEmpty)
        #expect(world.fleet.devices[Self.strap]?.recentFailures == 0, "the pool's score does not count it")
        #expect(world.fleet.devices[Self.strap]?.lastFailure == nil)
        #expect(machine.state == .suspended(.noPoweredAdapter))
        #expect(Self.linkLossCauses(world.published).isEmpty, "no link was lost: the journal's link_loss_cause is for links")
    }

    /// Two failed attempts in a row on the adapter, the second the first's retry, both before
    /// the power-off is heard: neither counts in the pool's score, nor as the last error.
    @Test func aRowOfFailedAttemptsBeforeThePowerOffIsTakenBackWhole() throws {
        var world = ExplainedLossWorld(adapters: [Self.hci0])
        world.advance(by: .seconds(1))
        let abort = DeviceEvent.Failure(name: "org.bluez.Error.Failed", message: "le-connection-abort-by-local")
        world.transportReports(.connectFailed(abort))
        let connects = world.connects.count
        // The retry after the first backoff (1 s, jittered by up to half), inside the window.
        world.advance(by: .milliseconds(1600))
        #expect(world.connects.count == connects + 1, "the retry is in flight")
        world.transportReports(.connectFailed(abort))
        #expect(world.fleet.devices[Self.strap]?.recentFailures == 2)
        world.advance(by: .milliseconds(3))
        world.report(.adapterChanged(Self.hci0, powered: false), .adapterPowerChanged(Self.hci0, powered: false))
        #expect(Self.withdrawals(world.published).count == 2)
        #expect(world.fleet.devices[Self.strap]?.recentFailures == 0, "the pool's score counts neither")
        #expect(world.fleet.devices[Self.strap]?.lastFailure == nil)
        #expect(try world.machine().reconnect.consecutiveFailures == 0)
    }

    /// The power-off arrives first: the machine ends the attempt without a failure, and the
    /// Connect's late error changes nothing.
    @Test func aConnectInFlightWhenItsAdapterPowersOffIsNoFailure() throws {
        var world = ExplainedLossWorld(adapters: [Self.hci0])
        world.advance(by: .seconds(1))
        world.report(.adapterChanged(Self.hci0, powered: false), .adapterPowerChanged(Self.hci0, powered: false))
        world.transportReports(.connectFailed(DeviceEvent.Failure(name: "org.bluez.Error.Failed", message: "le-connection-abort-by-local")))
        let machine = try world.machine()
        #expect(machine.reconnect.consecutiveFailures == 0)
        #expect(Self.failures(world.published).isEmpty)
        #expect(world.fleet.devices[Self.strap]?.recentFailures == 0)
        #expect(machine.state == .suspended(.noPoweredAdapter))
    }

    @Test func aConnectFailedLongBeforeThePowerOffStaysAFailure() throws {
        var world = ExplainedLossWorld(adapters: [Self.hci0])
        world.advance(by: .seconds(1))
        world.transportReports(.connectFailed(DeviceEvent.Failure(name: "org.bluez.Error.Failed", message: "le-connection-abort-by-remote")))
        world.advance(by: .milliseconds(900))  // within the backoff (1 s), past nothing else
        world.advance(by: FleetStateMachine.linkLossCauseWindow)
        world.report(.adapterChanged(Self.hci0, powered: false), .adapterPowerChanged(Self.hci0, powered: false))
        #expect(Self.withdrawals(world.published).isEmpty)
        #expect(world.fleet.devices[Self.strap]?.lastFailure == .transient)
    }
}

/// The fleet machine and a real `DeviceStateMachine` per device, run as `FleetOrchestrator` and
/// `DeviceActor` run them: inputs applied in order, deliveries reduced at once, the machines'
/// outputs queued as inputs behind the current one, timers fired as the test moves the clock.
/// Nothing answers an attempt by itself: the test says how BlueZ and the transport answer
/// (`report`, `transportReports`); a device's wait for services is answered at once.
struct ExplainedLossWorld {
    static let strap = FleetStateMachineTests.strap

    private(set) var fleet: FleetStateMachine
    private(set) var machines: [DeviceID: DeviceStateMachine] = [:]
    private var randoms: [DeviceID: SeededRandom] = [:]
    private(set) var now = MonotonicInstant.zero
    private var pending: [FleetStateMachine.Input] = []
    private var timers: [DeviceID: [DeviceStateMachine.TimerKind: (generation: UInt64, deadline: MonotonicInstant)]] = [:]
    private var evaluationAt: MonotonicInstant?
    /// Every `Connect` a device machine asked for, and when.
    private(set) var connects: [(device: DeviceID, adapter: AdapterID, at: MonotonicInstant)] = []
    /// Every fleet event published, in order.
    private(set) var published: [FleetEvent] = []

    /// The strap pinned, bluetoothd present with `adapters` powered, the strap's object on the
    /// first: its first attempt is granted at once.
    init(adapters: [AdapterID]) {
        fleet = FleetStateMachine(configuration: FleetStateMachineTests.configuration(), now: .zero, seed: 1)
        report(.start)
        report(.bluetoothdAppeared(held: [Self.strap], adapters: Set(adapters), powered: Set(adapters)))
        let objects = adapters.map { FleetStateMachine.DeviceObject(adapter: $0) }
        if let first = adapters.first { report(.device(Self.strap, .deviceFound(adapter: first), objects: objects)) }
        report(.started)
    }

    func machine(_ id: DeviceID = Self.strap) throws -> DeviceStateMachine {
        try #require(machines[id])
    }

    /// BlueZ reports the strap's link up on `adapter` (its pending Connect answered) and it
    /// becomes ready.
    mutating func linkUp(on adapter: AdapterID) throws {
        try #require(connects.last?.adapter == adapter, "a Connect in flight on \(adapter)")
        report(.device(Self.strap, .connected, objects: [FleetStateMachine.DeviceObject(adapter: adapter, connected: true)]))
        transportReports(.connected)
        try #require(try machine().state == .ready)
    }

    /// Facts from BlueZ, queued together (as the translator yields them) and applied in order.
    mutating func report(_ inputs: FleetStateMachine.Input...) {
        pending += inputs
        drain()
    }

    /// What the device actor's transport answers (a Connect's outcome), straight to the machine.
    mutating func transportReports(_ event: DeviceEvent, for id: DeviceID = Self.strap) {
        feed(id, event)
        drain()
    }

    /// Moves the clock, firing timers and the evaluation timer as they fall due.
    mutating func advance(by duration: Duration) {
        let end = now + duration
        while true {
            var next: (at: MonotonicInstant, fire: (inout ExplainedLossWorld) -> Void)?
            if let at = evaluationAt, at <= end {
                next = (at, { world in
                    world.evaluationAt = nil
                    world.pending.append(.evaluate)
                })
            }
            for (id, kinds) in timers.sorted(by: { $0.key < $1.key }) {
                for (kind, timer) in kinds.sorted(by: { $0.key.rawValue < $1.key.rawValue }) where timer.deadline <= end {
                    if next == nil || timer.deadline < (next?.at ?? end) {
                        next = (timer.deadline, { world in
                            world.timers[id]?[kind] = nil
                            world.feed(id, .timeout(kind, generation: timer.generation))
                        })
                    }
                }
            }
            guard let due = next else { break }
            now = max(now, due.at)
            due.fire(&self)
            drain()
        }
        now = end
    }

    private mutating func drain() {
        while !pending.isEmpty {
            let input = pending.removeFirst()
            for action in fleet.handle(input, now: now) {
                switch action {
                case .createDevice(let machine, let seed):
                    machines[machine.device] = machine
                    randoms[machine.device] = SeededRandom(seed: seed)
                case .deliver(let id, let event):
                    feed(id, event)
                case .requestEvaluation:
                    pending.append(.evaluate)
                case .scheduleEvaluation(let instant):
                    evaluationAt = instant
                case .publish(let event):
                    published.append(event)
                default:
                    break
                }
            }
        }
    }

    /// The device actor's part: reduce, then outputs to the fleet's queue, Connects noted,
    /// services answered at once, timers kept.
    private mutating func feed(_ id: DeviceID, _ event: DeviceEvent) {
        guard var machine = machines[id], var random = randoms[id] else { return }
        let effects = machine.reduce(event, now: now, random: &random)
        machines[id] = machine
        randoms[id] = random
        var answers: [DeviceEvent] = []
        for effect in effects {
            switch effect {
            case .requestAttempt: pending.append(.deviceOutput(.requestAttempt(id)))
            case .withdrawAttemptRequest: pending.append(.deviceOutput(.withdrawAttemptRequest(id)))
            case .attemptFinished(let adapter, let outcome):
                pending.append(.deviceOutput(.attemptFinished(id, adapter: adapter, outcome: outcome)))
            case .emit(let lifecycle): pending.append(.deviceOutput(.lifecycle(id, lifecycle)))
            case .persist(let update): pending.append(.deviceOutput(.persist(id, update)))
            case .startResolve: pending.append(.deviceOutput(.resolving(id, true)))
            case .stopResolve: pending.append(.deviceOutput(.resolving(id, false)))
            case .connect(let adapter): connects.append((id, adapter, now))
            case .awaitServices: answers.append(.servicesResolved(services: [], characteristics: []))
            case .scheduleTimer(let kind, let generation, let deadline): timers[id, default: [:]][kind] = (generation, deadline)
            case .cancelTimer(let kind): timers[id]?[kind] = nil
            default: break
            }
        }
        for answer in answers { feed(id, answer) }
    }
}
