import PropertyBased
import Testing
@testable import FleetCore

/// Whatever happened before, once bluetoothd, an adapter and the device are back and the device
/// is wanted, a healthy world leads the machine to `ready`.
@Suite struct DeviceStateMachinePropertyTests {
    /// The strap, and a cuff that must bond and sleeps between its measurements.
    static let configurations = [DeviceHarness.strap, DeviceHarness.cuff]

    @Test(arguments: configurations)
    func everyStateLeadsBackToReadyOnceTheDeviceIsReachable(configuration: DeviceStateMachine.Configuration) async throws {
        let moves = Gen.int(in: 0..<Chaos.moveCount).array(of: 0...120)
        await propertyCheck(count: 400, input: moves, Gen.uint64()) { moves, seed in
            var h = try DeviceHarness.awaitingGrant(configuration: configuration, policy: Chaos.tightPolicy)
            var chaos = Chaos(random: SeededRandom(seed: ~seed), answers: [.attemptGranted(adapter: DeviceHarness.hci0)])
            h.random = SeededRandom(seed: seed)
            for move in moves { chaos.apply(move, to: &h) }
            let history = h.state
            let reached = HealthyWorld.bringBack(&h, maxSteps: 200)
            #expect(reached, "stuck in \(h.state) after \(moves) (was \(history))")
        }
    }

    @Test(arguments: configurations)
    func wantedFalseAlwaysEndsIdleWithNothingArmed(configuration: DeviceStateMachine.Configuration) async throws {
        let moves = Gen.int(in: 0..<Chaos.moveCount).array(of: 0...120)
        await propertyCheck(count: 300, input: moves, Gen.uint64()) { moves, seed in
            var h = try DeviceHarness.idle(configuration: configuration)
            h.random = SeededRandom(seed: seed)
            var chaos = Chaos(random: SeededRandom(seed: ~seed))
            for move in moves { chaos.apply(move, to: &h) }
            _ = h.feed(.policyUpdated(wanted: false))
            #expect(h.state == .idle)
            #expect(DeviceStateMachine.TimerKind.allCases.allSatisfy { !h.machine.isArmed($0) })
        }
    }

    @Test(arguments: configurations)
    func everyGrantedAttemptIsFinishedExactlyOnce(configuration: DeviceStateMachine.Configuration) async throws {
        let moves = Gen.int(in: 0..<Chaos.moveCount).array(of: 0...120)
        await propertyCheck(count: 300, input: moves, Gen.uint64()) { moves, seed in
            var h = try DeviceHarness.idle(configuration: configuration)
            h.random = SeededRandom(seed: seed)
            var chaos = Chaos(random: SeededRandom(seed: ~seed))
            var inFlight = 0
            for move in moves {
                let (event, effects) = chaos.apply(move, to: &h)
                if case .attemptGranted = event { inFlight += 1 }
                inFlight -= effects.filter { if case .attemptFinished = $0 { true } else { false } }.count
                let holding: Int = if case .connecting(_?) = h.state { 1 } else { 0 }
                #expect(inFlight == holding, "after \(event): \(h.state)")
            }
        }
    }
}

/// Feeds arbitrary events, including out-of-order, duplicated and stale ones. Some moves give
/// the healthy answer to an earlier effect, so that walks also reach deep states (ready, an open
/// breaker, a spent budget) and not only the first steps.
struct Chaos {
    var random: SeededRandom
    var answers: [DeviceEvent] = []

    static let failures: [DeviceEvent.Failure] = [
        Failures.abortByRemote, Failures.slotLimit, Failures.unknownObject, Failures.notAuthorized,
        DeviceEvent.Failure(name: "org.bluez.Error.InProgress"), DeviceEvent.Failure(name: "org.bluez.Error.NotReady"),
        DeviceEvent.Failure(name: "org.example.Odd"),
    ]

    /// Small budgets, so that walks exhaust them and give up.
    static let tightPolicy = ReconnectPolicy(budgets: [.transient: 3, .gone: 2, .denied: 1, .unknown: 2])

    static let moveCount = 72

    static let pairingFailures: [DeviceEvent.Failure] = [
        DeviceEvent.Failure(name: "org.bluez.Error.AuthenticationFailed", message: "Authentication Failed"),
        DeviceEvent.Failure(name: "org.bluez.Error.AuthenticationCanceled", message: "Authentication Canceled"),
        DeviceEvent.Failure(name: "org.bluez.Error.AuthenticationTimeout", message: "Authentication Timeout"),
        DeviceEvent.Failure(name: "org.bluez.Error.AuthenticationRejected", message: "Authentication Rejected"),
    ]

    @discardableResult
    mutating func apply(_ move: Int, to h: inout DeviceHarness) -> (DeviceEvent, [DeviceEffect]) {
        let hci0 = DeviceHarness.hci0, hci1 = DeviceHarness.hci1
        let failure = Self.failures[Int(random.next() % UInt64(Self.failures.count))]
        let event: DeviceEvent
        switch move {
        case 0: event = .adapterPowered(hci0)
        case 1: event = .adapterUnpowered(hci0)
        case 2: event = .adapterPowered(hci1)
        case 3: event = .adapterUnpowered(hci1)
        case 4: event = .bluetoothdAppeared
        case 5: event = .bluetoothdVanished
        case 6: event = .deviceFound(adapter: hci0)
        case 7: event = .deviceLost
        case 8: event = .connected
        case 9: event = .disconnected(Failures.remoteReason)
        case 10: event = .connectFailed(failure)
        case 11: event = .servicesResolved(services: DeviceHarness.strapServices, characteristics: DeviceHarness.strapCharacteristics)
        case 12: event = .servicesResolved(services: [], characteristics: [])
        case 13: event = .notificationsEnabled(characteristic: UUIDs.heartRateMeasurement)
        case 14: event = .subscribeFailed(characteristic: UUIDs.heartRateMeasurement, failure)
        case 15: event = .valueReceived(characteristic: UUIDs.batteryLevel)
        case 16: event = .readFailed(characteristic: UUIDs.batteryLevel, failure)
        case 17: event = .writeStarted
        case 18: event = .writeCompleted
        case 19: event = .writeFailed(failure)
        case 20: event = .writeCreditAvailable
        case 21: event = .attemptGranted(adapter: hci0)
        case 22: event = .attemptGranted(adapter: hci1)
        case 23: event = .policyUpdated(wanted: true)
        case 24: event = .policyUpdated(wanted: false)
        case 25: event = .restoreRequested
        case 26: event = .disconnected(nil)
        case 28: event = .connectFailed(Failures.notAuthorized)
        case 29: event = .servicesResolved(services: [UUIDs.heartRateService], characteristics: [UUIDs.heartRateMeasurement])
        case 30: event = .reconnectRequested
        case 31: event = .subscriptionAdded(characteristic: UUIDs.temperature)
        case 32: event = .subscriptionRemoved(characteristic: UUIDs.temperature)
        case 64: event = .pairedChanged(true)
        case 65: event = .pairedChanged(false)
        case 66: event = .pairingSucceeded
        case 67: event = .pairingFailed(Self.pairingFailures[Int(random.next() % UInt64(Self.pairingFailures.count))])
        case 68: event = .subscribeFailed(characteristic: UUIDs.heartRateMeasurement, Failures.notPaired)
        case 69: event = .readFailed(characteristic: UUIDs.batteryLevel, Failures.notPaired)
        case 70: event = .clockWritten
        case 71: event = .clockWriteFailed(random.next() % 2 == 0 ? Failures.notPaired : Failures.writeFailed)
        case 33..<64 where !answers.isEmpty:
            event = answers.removeFirst()
        case 33..<64 where h.state == .suspended(.bluetoothdUnavailable):
            event = .bluetoothdAppeared
        case 33..<64 where h.state == .suspended(.noPoweredAdapter):
            event = .adapterPowered(hci0)
        case 33..<64 where h.state == .idle:
            event = .policyUpdated(wanted: true)
        case 27:
            // A stale timeout of any kind.
            let kinds = DeviceStateMachine.TimerKind.allCases
            let kind = kinds[Int(random.next() % UInt64(kinds.count))]
            event = .timeout(kind, generation: 0)
        default:
            // Fire one of the armed timers, moving the clock to its deadline.
            let armed = DeviceStateMachine.TimerKind.allCases.filter { h.machine.isArmed($0) }
            guard !armed.isEmpty else {
                h.advance(by: .milliseconds(Int64(random.next() % 100_000)))
                return (.writeCreditAvailable, h.feed(.writeCreditAvailable))
            }
            let kind = armed[Int(random.next() % UInt64(armed.count))]
            if let deadline = h.deadline(of: kind), deadline > h.now { h.now = deadline }
            event = .timeout(kind, generation: h.machine.armedTimers[kind] ?? 0)
        }
        let effects = h.feed(event)
        for effect in effects {
            // A third of the answers are faulty, so breakers open and budgets run out.
            let faulty = random.next() % 3 == 0
            switch effect {
            case .connect where faulty:
                // Some attempts find no object to connect through (stock bluetoothd offers no
                // ConnectDevice): the device goes back to discovery without a failure.
                answers.append(random.next() % 4 == 0 ? .connectNeedsDiscovery : .connectFailed(failure))
            case .awaitServices where faulty: answers.append(.servicesResolved(services: [], characteristics: []))
            case .writeCurrentTime where faulty: answers.append(.clockWriteFailed(Failures.writeFailed))
            case .pair where faulty:
                answers.append(.pairingFailed(Self.pairingFailures[Int(random.next() % UInt64(Self.pairingFailures.count))]))
            default: answers.append(contentsOf: HealthyWorld.answer(to: effect))
            }
        }
        return (event, effects)
    }
}

/// A world where everything works: each effect gets the answer a healthy bluetoothd and fleet
/// gate would give, and when nothing is pending the earliest armed timer fires.
enum HealthyWorld {
    static func bringBack(_ h: inout DeviceHarness, maxSteps: Int) -> Bool {
        var pending: [DeviceEvent] = [
            .bluetoothdAppeared, .adapterPowered(DeviceHarness.hci0), .deviceFound(adapter: DeviceHarness.hci0),
            .policyUpdated(wanted: true),
        ]
        // The gate answers every request it holds, including one made before.
        if h.attemptRequested { pending.append(.attemptGranted(adapter: DeviceHarness.hci0)) }
        for _ in 0..<maxSteps {
            if h.state == .ready { return true }
            let event: DeviceEvent
            if pending.isEmpty {
                let armed = DeviceStateMachine.TimerKind.allCases.compactMap { kind in
                    h.deadline(of: kind).map { (kind, $0) }
                }
                guard let (kind, deadline) = armed.min(by: { $0.1 < $1.1 }) else { return false }
                if deadline > h.now { h.now = deadline }
                event = .timeout(kind, generation: h.machine.armedTimers[kind] ?? 0)
            } else {
                event = pending.removeFirst()
            }
            for effect in h.feed(event) {
                pending.append(contentsOf: answer(to: effect))
            }
        }
        return h.state == .ready
    }

    static func answer(to effect: DeviceEffect) -> [DeviceEvent] {
        switch effect {
        case .startResolve: [.deviceFound(adapter: DeviceHarness.hci0)]
        case .requestAttempt: [.attemptGranted(adapter: DeviceHarness.hci0)]
        case .connect: [.connected]
        case .awaitServices:
            [.servicesResolved(services: DeviceHarness.strapServices, characteristics: DeviceHarness.strapCharacteristics)]
        case .read(let characteristic): [.valueReceived(characteristic: characteristic)]
        case .subscribe(let characteristic, _): [.notificationsEnabled(characteristic: characteristic)]
        case .disconnect: [.disconnected(DeviceEvent.Failure(name: "org.bluez.Reason.Local"))]
        case .pair: [.pairingSucceeded]
        case .writeCurrentTime: [.clockWritten]
        default: []
        }
    }
}
