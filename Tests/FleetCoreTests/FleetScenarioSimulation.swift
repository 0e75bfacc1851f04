import FleetCore

/// A discrete-event simulation of the fleet after every link drops at once, driven by the real
/// `FleetStateMachine` and a real `DeviceStateMachine` per device, on a simulated clock: the
/// executor's part is played by a loop that applies inputs in order and carries out actions as
/// `FleetOrchestrator` does.
///
/// Model: every pinned device is connected and ready, spread over the adapters by the pool
/// policy, long enough for its reconnect controller to count the link as stable; then every link
/// drops at once (t = 0). Each device's machine retries as its controller decides (the fast first
/// retry, `firstRetryDelay`), asks the fleet for an attempt, and a granted attempt holds its
/// adapter for `connectLatency` (connect and service resolution) and always succeeds.
struct FleetScenarioSimulation {
    struct Parameters: CustomStringConvertible {
        var devices: Int
        var adapters: Int
        var slotsPerAdapter: Int
        var connectLatency: Duration
        var firstRetryDelay: Duration
        var rateLimit: AttemptRateLimit
        var seed: UInt64

        var description: String {
            "\(devices) devices, \(adapters)×\(slotsPerAdapter) slots, L=\(connectLatency), r=\(firstRetryDelay), "
                + "burst \(rateLimit.burst) per \(rateLimit.refillInterval), seed \(seed)"
        }
    }

    struct Outcome {
        /// When the last device became ready again (from the loss at t = 0), or nil if the
        /// simulation stalled.
        var allReadyAt: MonotonicInstant?
        var grantInstants: [MonotonicInstant] = []
        var maxAttemptsInFlightOnOneAdapter = 0
        var maxLinksOnOneAdapter = 0
        var evictions = 0
        var evaluations = 0
    }

    /// Something due at an instant: a fleet input, or an event for one device's machine.
    private enum Due {
        case fleet(FleetStateMachine.Input)
        case device(DeviceID, DeviceEvent)
        case evaluationTimer(generation: Int)
    }

    private var fleet: FleetStateMachine
    private var machines: [DeviceID: DeviceStateMachine] = [:]
    private var randoms: [DeviceID: SeededRandom] = [:]
    private var now = MonotonicInstant.zero
    /// Inputs waiting to be applied now, in order (the executor's `pending`).
    private var pending: [FleetStateMachine.Input] = []
    private var scheduled: [(at: MonotonicInstant, sequence: Int, due: Due)] = []
    private var sequence = 0
    private var evaluationTimerGeneration = 0
    private let connectLatency: Duration
    private let adapterIDs: [AdapterID]
    /// Set at the loss: instants are reported relative to it.
    private var lossAt: MonotonicInstant?
    private var outcome = Outcome()

    static func run(_ parameters: Parameters) -> Outcome {
        var simulation = FleetScenarioSimulation(parameters)
        return simulation.run(parameters)
    }

    private init(_ parameters: Parameters) {
        var reconnect = ReconnectPolicy()
        reconnect.fastFirstRetryDelay = parameters.firstRetryDelay
        let ids = (0..<parameters.devices).map(PoolFixture.device)
        let configuration = FleetRuntimeConfiguration(
            pinned: ids.map { FleetRuntimeConfiguration.PinnedDevice(id: $0, className: "wearable") },
            classes: ["wearable": DeviceStateMachine.Configuration()],
            pool: PoolConfiguration(
                maxConnections: parameters.devices, defaultSlotsPerAdapter: parameters.slotsPerAdapter,
                attemptRateLimit: parameters.rateLimit),
            reconnect: reconnect)
        fleet = FleetStateMachine(configuration: configuration, now: .zero, seed: parameters.seed)
        connectLatency = parameters.connectLatency
        adapterIDs = (0..<parameters.adapters).map(PoolFixture.adapter)
    }

    private mutating func run(_ parameters: Parameters) -> Outcome {
        // Every adapter hears every device, at an RSSI of its own.
        var rng = SeededRandom(seed: parameters.seed)
        var objects: [DeviceID: [FleetStateMachine.DeviceObject]] = [:]
        for number in 0..<parameters.devices {
            objects[PoolFixture.device(number)] = adapterIDs.map {
                FleetStateMachine.DeviceObject(adapter: $0, rssi: Int.random(in: -95 ... -40, using: &rng))
            }
        }
        pending.append(.start)
        pending.append(.bluetoothdAppeared(held: Set(objects.keys), adapters: Set(adapterIDs)))
        for adapter in adapterIDs {
            pending.append(.adapterChanged(adapter, powered: true))
            pending.append(.adapterPowerChanged(adapter, powered: true))
        }
        for (id, list) in objects.sorted(by: { $0.key < $1.key }) {
            for object in list { pending.append(.device(id, .deviceFound(adapter: object.adapter), objects: list)) }
        }
        pending.append(.started)
        // The healthy fleet: everyone connects and stays up past the controller's stable period.
        guard runUntilQuiet(limit: .seconds(86_400)), machines.values.allSatisfy({ $0.state == .ready }) else { return outcome }
        now = now + ReconnectPolicy().stablePeriod + .seconds(1)
        let loss = now
        lossAt = loss
        for (id, list) in objects.sorted(by: { $0.key < $1.key }) {
            pending.append(.device(id, .disconnected(nil), objects: list))
        }
        _ = runUntilQuiet(limit: .seconds(86_400))
        return outcome
    }

    /// Runs until nothing is pending or scheduled; false if it would pass `limit`.
    private mutating func runUntilQuiet(limit: Duration) -> Bool {
        let end = now + limit
        while outcome.evaluations < 1_000_000 {
            if !pending.isEmpty {
                apply(pending.removeFirst())
                continue
            }
            guard let next = scheduled.indices.min(by: { (scheduled[$0].at, scheduled[$0].sequence) < (scheduled[$1].at, scheduled[$1].sequence) })
            else { return true }
            let item = scheduled.remove(at: next)
            guard item.at <= end else { return false }
            now = max(now, item.at)
            switch item.due {
            case .fleet(let input):
                pending.append(input)
            case .device(let id, let event):
                feed(id, event)
            case .evaluationTimer(let generation):
                if generation == evaluationTimerGeneration { pending.append(.evaluate) }
            }
        }
        return false
    }

    private mutating func schedule(_ due: Due, at instant: MonotonicInstant) {
        sequence += 1
        scheduled.append((instant, sequence, due))
    }

    // MARK: - The executor's part

    private mutating func apply(_ input: FleetStateMachine.Input) {
        if case .evaluate = input { outcome.evaluations += 1 }
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
                evaluationTimerGeneration += 1
                if let instant { schedule(.evaluationTimer(generation: evaluationTimerGeneration), at: instant) }
            case .publish(.attemptGranted(_, _, let at)):
                if let lossAt { outcome.grantInstants.append(.zero + at.duration(since: lossAt)) }
            case .publish(.evicted):
                if lossAt != nil { outcome.evictions += 1 }
            default:
                break
            }
        }
        guard lossAt != nil else { return }
        var attempting: [AdapterID: Int] = [:]
        var linked: [AdapterID: Int] = [:]
        for device in fleet.devices.values {
            guard let adapter = device.link.adapter else { continue }
            linked[adapter, default: 0] += 1
            if device.link.isAttempting { attempting[adapter, default: 0] += 1 }
        }
        outcome.maxAttemptsInFlightOnOneAdapter = max(outcome.maxAttemptsInFlightOnOneAdapter, attempting.values.max() ?? 0)
        outcome.maxLinksOnOneAdapter = max(outcome.maxLinksOnOneAdapter, linked.values.max() ?? 0)
    }

    /// The device actor's part: the machine reduces the event, its effects become outputs for
    /// the fleet, answers from a world where everything works, and timers.
    private mutating func feed(_ id: DeviceID, _ event: DeviceEvent) {
        guard var machine = machines[id], var random = randoms[id] else { return }
        let effects = machine.reduce(event, now: now, random: &random)
        machines[id] = machine
        randoms[id] = random
        for effect in effects {
            switch effect {
            case .requestAttempt: pending.append(.deviceOutput(.requestAttempt(id)))
            case .withdrawAttemptRequest: pending.append(.deviceOutput(.withdrawAttemptRequest(id)))
            case .attemptFinished(let adapter, let outcome): pending.append(.deviceOutput(.attemptFinished(id, adapter: adapter, outcome: outcome)))
            case .emit(let event): pending.append(.deviceOutput(.lifecycle(id, event)))
            case .connect: schedule(.device(id, .connected), at: now + connectLatency)
            case .awaitServices: schedule(.device(id, .servicesResolved(services: [], characteristics: [])), at: now)
            case .read(let characteristic): schedule(.device(id, .valueReceived(characteristic: characteristic)), at: now)
            case .subscribe(let characteristic, _): schedule(.device(id, .notificationsEnabled(characteristic: characteristic)), at: now)
            case .scheduleTimer(let kind, let generation, let deadline): schedule(.device(id, .timeout(kind, generation: generation)), at: deadline)
            default: break
            }
        }
        if let lossAt, outcome.allReadyAt == nil, machine.state == .ready, machines.values.allSatisfy({ $0.state == .ready }) {
            outcome.allReadyAt = .zero + now.duration(since: lossAt)
        }
    }

    /// The largest number of grants inside any window, minus what the token bucket allows for
    /// that window (`burst + ⌊w / interval⌋`); positive means the rate limit was broken.
    static func worstRateExcess(_ instants: [MonotonicInstant], limit: AttemptRateLimit) -> Int {
        let sorted = instants.sorted()
        let interval = limit.refillInterval.nanosecondsClamped
        var worst = Int.min
        for start in sorted.indices {
            for end in start..<sorted.count {
                let window = sorted[end].nanoseconds - sorted[start].nanoseconds
                let allowed = limit.burst + Int(window / interval)
                worst = max(worst, (end - start + 1) - allowed)
            }
        }
        return worst
    }
}
