import FleetCore
import GATT

/// The single authority for one device at run time: it feeds every event through FleetCore's
/// `DeviceStateMachine` and executes the returned effects in order.
///
/// Guarantees:
/// - State changes only in `handle(_:)`, through the reducer; effects run in the order returned.
/// - Long operations (connect, service discovery, reads, subscriptions) run in child tasks and
///   come back as events, so the actor never blocks and always hears timeouts and disconnects.
/// - Timers are tasks on the injected clock, one per `TimerKind`; re-arming a kind cancels the
///   previous task, and a late firing is harmless (the machine ignores stale generations).
/// - `shutDown()` cancels every task the actor started.
public actor DeviceActor {
    public nonisolated let device: DeviceID
    private var machine: DeviceStateMachine
    private let transport: any DeviceTransport
    private let clock: any MonotonicClock
    private var random: SeededRandom
    private let output: @Sendable (DeviceOutput) -> Void
    /// Records each event and its effects for `wearfleetctl replay`; nil when not recording.
    private var recorder: DeviceInputRecorder?
    private var timers: [DeviceStateMachine.TimerKind: Task<Void, Never>] = [:]
    private var operations: [UInt64: Task<Void, Never>] = [:]
    private var nextOperation: UInt64 = 0

    public init(
        machine: DeviceStateMachine, transport: any DeviceTransport, clock: any MonotonicClock, seed: UInt64,
        recorder: DeviceInputRecorder? = nil, output: @escaping @Sendable (DeviceOutput) -> Void
    ) {
        self.device = machine.device
        self.machine = machine
        self.transport = transport
        self.clock = clock
        self.random = SeededRandom(seed: seed)
        self.output = output
        self.recorder = recorder
    }

    public var state: DeviceState { machine.state }
    public var session: UInt64 { machine.session }

    /// Feeds one event and executes what the machine decides.
    public func handle(_ event: DeviceEvent) {
        let now = clock.now()
        // The adapter the link goes through, as the effects mean it: a teardown forgets it in
        // the machine, but its disconnect and unsubscribes still act on that link.
        let linkBefore = machine.linkAdapter
        let effects = machine.reduce(event, now: now, random: &random)
        recorder?.record(event, now: now, effects: effects)
        let link = machine.linkAdapter ?? linkBefore
        for effect in effects { execute(effect, link: link) }
    }

    /// The class configuration and reconnect policy the device runs with.
    public var configuration: (device: DeviceStateMachine.Configuration, reconnect: ReconnectPolicy) {
        (machine.configuration, machine.reconnect.policy)
    }

    /// Applies a reloaded configuration; the current link and its session are kept.
    public func reconfigure(_ configuration: DeviceStateMachine.Configuration, reconnectPolicy: ReconnectPolicy) {
        machine.reconfigure(configuration, reconnectPolicy: reconnectPolicy)
        recorder?.recordReconfiguration(configuration, reconnectPolicy: reconnectPolicy, now: clock.now())
    }

    /// Cancels timers and in-flight operations (the daemon is stopping or forgets the device).
    public func shutDown() {
        for (_, task) in timers { task.cancel() }
        timers.removeAll()
        for (_, task) in operations { task.cancel() }
        operations.removeAll()
    }

    // MARK: - Effects

    /// Carries out one effect; operations on the link act through `link`'s object.
    private func execute(_ effect: DeviceEffect, link: AdapterID?) {
        let device = self.device
        let transport = self.transport
        switch effect {
        case .startResolve:
            output(.resolving(device, true))
        case .stopResolve:
            output(.resolving(device, false))
        case .requestAttempt:
            output(.requestAttempt(device))
        case .withdrawAttemptRequest:
            output(.withdrawAttemptRequest(device))
        case .attemptFinished(let adapter, let outcome):
            output(.attemptFinished(device, adapter: adapter, outcome: outcome))
        case .standingEnded(let adapter):
            output(.standingEnded(device, adapter: adapter))
        case .connect(let adapter):
            let timeout = machine.configuration.timeouts.connect
            run(session: machine.session) {
                do throws(TransportFailure) {
                    switch try await transport.connect(device, adapter: adapter, within: timeout) {
                    case .connected: return .connected
                    case .needsDiscovery: return .connectNeedsDiscovery
                    case .adapterUnavailable:
                        // The fleet is about to tell the machine why, and that ends the attempt
                        // without a failure; the machine's connect timer still bounds the wait,
                        // should that news never come.
                        return nil
                    }
                } catch {
                    return .connectFailed(error)
                }
            }
        case .cancelConnect:
            run { await transport.cancelConnect(device, on: link) }
        case .disconnect:
            run { await transport.disconnect(device, on: link) }
        case .awaitServices:
            let requirement = GATTRequirement(machine.configuration)
            run {
                do throws(TransportFailure) {
                    let found = try await transport.awaitServices(device, on: link, requiring: requirement)
                    return .servicesResolved(services: found.services, characteristics: found.characteristics)
                } catch {
                    // The machine's discovery timer decides what a failed wait means.
                    return nil
                }
            }
        case .read(let characteristic):
            let output = self.output
            run {
                do throws(TransportFailure) {
                    let bytes = try await transport.read(device, characteristic: characteristic, on: link)
                    if !transport.readValuesAnnounced { output(.value(device, characteristic: characteristic, bytes: bytes)) }
                    return .valueReceived(characteristic: characteristic)
                } catch {
                    return .readFailed(characteristic: characteristic, error)
                }
            }
        case .subscribe(let characteristic, let path):
            let timeout = machine.configuration.timeouts.subscribe
            run {
                do throws(TransportFailure) {
                    try await transport.subscribe(device, characteristic: characteristic, via: path, on: link, within: timeout)
                    return .notificationsEnabled(characteristic: characteristic)
                } catch {
                    return .subscribeFailed(characteristic: characteristic, error)
                }
            }
        case .pair:
            run(session: machine.session) {
                do throws(TransportFailure) {
                    try await transport.pair(device, on: link)
                    return .pairingSucceeded
                } catch {
                    return .pairingFailed(error)
                }
            }
        case .writeCurrentTime:
            let bytes = CurrentTime.gatewayNow().encode()
            run(session: machine.session) {
                do throws(TransportFailure) {
                    try await transport.writeForSetup(
                        device, characteristic: DeviceStateMachine.currentTimeCharacteristic, bytes: bytes, on: link)
                    return .clockWritten
                } catch {
                    return .clockWriteFailed(error)
                }
            }
        case .unsubscribe(let characteristic, let path):
            run { await transport.unsubscribe(device, characteristic: characteristic, via: path, on: link) }
        case .resumeWrites:
            output(.resumeWrites(device))
        case .scheduleTimer(let kind, let generation, let deadline):
            timers[kind]?.cancel()
            let clock = self.clock
            timers[kind] = Task { [weak self] in
                do {
                    try await clock.sleep(until: deadline)
                } catch {
                    return
                }
                await self?.handle(.timeout(kind, generation: generation))
            }
        case .cancelTimer(let kind):
            timers.removeValue(forKey: kind)?.cancel()
        case .persist(let update):
            output(.persist(device, update))
        case .emit(let event):
            output(.lifecycle(device, event))
        }
    }

    /// Runs an operation in a child task; its resulting event (if any) is fed back in.
    /// `session`: the outcome belongs to that connection session, and is dropped when a newer
    /// one began meanwhile (a `Connect` whose object went, answered after the device was found
    /// and granted again, must not end the new attempt).
    private func run(session: UInt64? = nil, _ operation: @escaping @Sendable () async -> DeviceEvent?) {
        nextOperation += 1
        let id = nextOperation
        operations[id] = Task { [weak self] in
            let event = await operation()
            await self?.operationFinished(id, event: event, session: session)
        }
    }

    private func run(_ operation: @escaping @Sendable () async -> Void) {
        run { () async -> DeviceEvent? in
            await operation()
            return nil
        }
    }

    private func operationFinished(_ id: UInt64, event: DeviceEvent?, session: UInt64?) {
        guard operations.removeValue(forKey: id) != nil else { return }  // cancelled by shutDown
        if let session, session != machine.session { return }
        if let event { handle(event) }
    }
}
