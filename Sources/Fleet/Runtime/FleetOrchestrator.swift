import BlueZ
import CSocketSupport
import FleetCore
import FleetState
import Logging

/// The fleet at run time: the executor of FleetCore's `FleetStateMachine`. It turns what BlueZ,
/// the device actors, timers and callers report into the machine's inputs, one at a time, and
/// carries out the actions each returns, in order: device actors, bluetoothd (through
/// `FleetBluetooth`), the write path and the fleet's event consumers (journal, observers, the
/// state store's feeder, activity feeds, the state stream).
///
/// Guarantees:
/// - Decisions are the machine's alone: this actor keeps only the things that execute them
///   (device actors, timers, the input queue) and takes no decision between two `await`s.
/// - Inputs are applied in the order they were submitted, each one's actions carried out before
///   the next input is applied, so no input sees a half-applied change (a reload included).
/// - Device outputs are processed in the order each device produced them (one stream).
public actor FleetOrchestrator {
    public typealias ReloadSummary = FleetStateMachine.ReloadSummary
    public typealias PersistContext = FleetStateMachine.PersistContext

    private var machine: FleetStateMachine
    /// bluetoothd, as the fleet sees it (BlueZ's D-Bus API, or a test's fake).
    let bluetooth: any FleetBluetooth
    let clock: any MonotonicClock
    let logger: Logger
    public nonisolated let pipeline: ValuePipeline
    let writes: WriteCoordinator
    private var actors: [DeviceID: DeviceActor] = [:]
    /// Every device state change, as it happens (newest kept when nobody reads).
    public nonisolated let stateChanges: AsyncStream<(DeviceID, DeviceState)>
    private let stateChangeSink: AsyncStream<(DeviceID, DeviceState)>.Continuation
    private let outputs: AsyncStream<DeviceOutput>
    private let outputSink: AsyncStream<DeviceOutput>.Continuation
    private var tasks: [Task<Void, Never>] = []
    private var evaluationTimer: Task<Void, Never>?
    private var discoveryRetryTimer: Task<Void, Never>?
    /// Calls to bluetoothd in flight (`callBluetooth`), by number: each runs as a task of its own
    /// so the loop that applies inputs never waits for bluetoothd.
    private var bluetoothCalls: [UInt64: Task<Void, Never>] = [:]
    private var nextBluetoothCall: UInt64 = 0
    /// `summary()`'s line until the next input is applied: it is asked every 5 s (`STATUS=`)
    /// and by the control interface; see NOTES.md on an idle daemon's CPU.
    private var cachedSummary: String?
    /// Who owns each device when several gateways share the fleet (`noteOwners`).
    var owners: [DeviceID: String] = [:]
    /// Inputs waiting to be applied (nil: the watchdog's probe), with the caller waiting for each
    /// reply (if any); those before `nextToApply` were applied.
    private var pending: [(input: FleetStateMachine.Input?, ticket: UInt64)] = []
    private var nextToApply = 0
    /// Inputs applied since start, and how many had been when the watchdog last probed.
    private var inputsApplied: UInt64 = 0
    private var inputsAppliedAtLastProbe: UInt64 = 0
    /// Devices whose newest waiting input is a change of their objects alone (`.device(id, nil,
    /// objects:)`, RSSI and the like), by that input's ticket: the next such change replaces it
    /// in place (`coalesce`).
    private var coalescible: [DeviceID: UInt64] = [:]
    private var nextTicket: UInt64 = 0
    private var waiting: [UInt64: CheckedContinuation<FleetStateMachine.Reply?, Never>] = [:]
    private var draining = false
    /// The task applying inputs while any wait; it ends when none is left.
    private var drainer: Task<Void, Never>?
    /// The pending heap release (`scheduleHeapRelease`).
    private var heapReleaseTimer: Task<Void, Never>?
    /// `disconnect` callers waiting for BlueZ to report a device's link gone, by device and
    /// ticket: resumed once an applied input leaves the fleet's records without the link, or by
    /// their timer.
    private var linkDownWaiters: [DeviceID: [UInt64: LinkDownWaiter]] = [:]
    private var nextLinkDownTicket: UInt64 = 0
    /// `saveKnowledge(in:)`: persist effects queued for the store, and the task applying them.
    var finishStoreUpdates: (@Sendable () -> Void)?
    var storeWriter: Task<Void, Never>?
    /// Where run-time pins are kept across restarts (`keepRuntimePins(in:)`), and how many
    /// changes were saved (a save of an older set never overwrites a newer one).
    var runtimePinsFile: RuntimePinsFile?
    var runtimePinsGeneration: UInt64 = 0
    /// Pin and unpin transactions run one at a time (`saveThenApply`), so no two try, save and
    /// apply interleaved; the waiting ones, in order.
    var pinTransactionRunning = false
    var pinTransactionsWaiting: [CheckedContinuation<Void, Never>] = []
    /// Told about fleet events as they happen (metrics); see `FleetOrchestrator+Observers`.
    var observers: [any FleetObserver] = []
    private var eventLog: FleetEventLog
    private nonisolated let feeds = FleetEventFeeds()
    /// Records every input for `wearfleetctl replay` when logging at debug (else does nothing).
    private var recorder: InputRecorder

    /// A fleet on BlueZ's D-Bus API through `client`.
    public init(
        configuration: FleetRuntimeConfiguration, client: BlueZClient, clock: any MonotonicClock = SystemMonotonicClock(),
        logger: Logger, seed: UInt64
    ) throws {
        let pipeline = ValuePipeline(logger: logger)
        self.init(
            configuration: configuration, bluetooth: try BlueZFleetBluetooth(client: client, pipeline: pipeline, clock: clock, logger: logger),
            pipeline: pipeline,
            clock: clock, logger: logger, seed: seed)
    }

    /// A fleet on any `FleetBluetooth`; `pipeline` is where its values are decoded and counted.
    public init(
        configuration: FleetRuntimeConfiguration, bluetooth: any FleetBluetooth, pipeline: ValuePipeline,
        clock: any MonotonicClock = SystemMonotonicClock(), logger: Logger, seed: UInt64
    ) {
        let now = clock.now()
        self.machine = FleetStateMachine(configuration: configuration, now: now, seed: seed)
        self.recorder = InputRecorder(logger: logger, configuration: configuration, seed: seed, now: now)
        self.bluetooth = bluetooth
        self.clock = clock
        self.logger = logger
        self.eventLog = FleetEventLog(logger: logger, pipeline: pipeline)
        self.pipeline = pipeline
        let (outputs, outputSink) = AsyncStream<DeviceOutput>.makeStream()
        self.outputs = outputs
        self.outputSink = outputSink
        self.writes = WriteCoordinator(channel: bluetooth, clock: clock) { device, event in
            outputSink.yield(.writeOutcome(device, event))
        }
        (stateChanges, stateChangeSink) = AsyncStream<(DeviceID, DeviceState)>.makeStream(bufferingPolicy: .bufferingNewest(1024))
    }

    // MARK: - Lifecycle

    /// Creates the pinned devices, starts following bluetoothd and returns (READY may be sent
    /// then: devices connect afterwards).
    public func start() async throws {
        await submit(.start)
        let outputs = self.outputs
        let pipeline = self.pipeline
        tasks.append(Task { [weak self] in
            for await output in outputs {
                // Values read on connect go to the data path, like notifications.
                if case .value(let id, let characteristic, let bytes) = output {
                    pipeline.ingest(device: id, characteristic: characteristic, bytes: bytes)
                } else {
                    await self?.enqueue(.deviceOutput(output))
                }
            }
        })
        let facts = bluetooth.facts()
        tasks.append(Task { [weak self] in
            for await fact in facts { await self?.enqueue(fact) }
        })
        // bluetoothd was there: its devices are told it is, with its powered adapters, before
        // they are wanted, so none is suspended for the moment its facts were on their way.
        if try await bluetooth.start() { await submit(.bluetoothdPresentAtStart) }
        await submit(.started)
    }

    /// Stops pursuing devices; disconnects the links the daemon made when configured to.
    public func stop() async {
        await submit(.stop)
        await bluetooth.stop()
        for task in tasks { task.cancel() }
        tasks.removeAll()
        evaluationTimer?.cancel()
        discoveryRetryTimer?.cancel()
        heapReleaseTimer?.cancel()
        for call in bluetoothCalls.values { call.cancel() }
        bluetoothCalls.removeAll()
        // What was queued before the producers ended is applied before `stop` returns.
        await drainer?.value
        finishStoreUpdates?()
        await storeWriter?.value
        pipeline.finish()
        feeds.finish()
        stateChangeSink.finish()
    }

    /// Numbers the journal's sessions under this daemon run (`StateStore.beginRun`), so a
    /// `SESSION_ID` never names sessions of two runs. Call before `start()`.
    public func numberSessions(run: UInt64) {
        eventLog.run = run
    }

    /// This run's number for session ids (`numberSessions`), nil when sessions are not numbered
    /// by run (tests, benchmarks).
    public var sessionRun: UInt64? { eventLog.run }

    /// The journal's `SESSION_ID` of a device's session `session` in run `run` (nil: sessions not
    /// numbered by run): also what the live records (watch, MQTT) and `DeviceStateChanged` carry
    /// as `session`, so one id finds a session everywhere.
    public static func sessionID(run: UInt64?, session: UInt64) -> String {
        run.map { "\($0)-\(session)" } ?? "\(session)"
    }

    /// The watchdog's probe: whether the fleet runs, answered once the loop has shown it applies
    /// inputs. A loop that applied inputs since the last probe is answered at once (a long
    /// backlog, a restore of a thousand devices on a slow gateway, must not pass for a stuck
    /// loop); otherwise the probe travels through the input queue and is answered when the loop
    /// reaches it. A loop stuck on an input never answers, and the watchdog's deadline withholds
    /// the ping; an answer from this actor alone would prove nothing, since it answers while the
    /// loop is suspended. bluetoothd not answering never delays it: no input waits for
    /// bluetoothd. Cancelled (the deadline passed), it answers false at once.
    public func heartbeat() async -> Bool {
        if inputsApplied != inputsAppliedAtLastProbe {
            inputsAppliedAtLastProbe = inputsApplied
            return machine.running
        }
        let ticket = nextTicket
        let reached = await withTaskCancellationHandler {
            await withCheckedContinuation(isolation: self) { reply in schedule(nil, reply: reply) }
        } onCancel: {
            Task { await self.abandonProbe(ticket) }
        }
        return reached == .done && machine.running
    }

    private func abandonProbe(_ ticket: UInt64) {
        waiting.removeValue(forKey: ticket)?.resume(returning: nil)
    }

    /// Hands the state file's devices to the fleet. Call before `start()`.
    public func restore(_ known: [KnownDevice]) async {
        await submit(.restore(known.map(\.restoredDevice)))
    }

    /// Applies a reloaded, already validated configuration, as one input.
    @discardableResult
    public func reconfigure(_ new: FleetRuntimeConfiguration) async -> ReloadSummary {
        var objects: [DeviceID: [FleetStateMachine.DeviceObject]] = [:]
        for pinned in new.pinned { objects[pinned.id] = await bluetooth.objects(of: pinned.id) }
        guard case .reloaded(let summary)? = await submit(.reload(new, objects: objects)) else { return ReloadSummary() }
        return summary
    }

    /// A new feed of everything the fleet does from now on: fleet events and decoded values,
    /// at most `limit` waiting (the oldest dropped and counted when the consumer falls behind).
    public nonisolated func activity(bufferingNewest limit: Int = 4096) -> FleetActivityFeed {
        let feeds = self.feeds
        let pipeline = self.pipeline
        return FleetActivityFeed(limit: limit) { continuation, feed in
            guard let id = feeds.add(feed, continuation) else {
                continuation.finish()
                return {}
            }
            let tap = pipeline.tap { value in feed.yield(.value(value), to: continuation) }
            return {
                feeds.remove(id)
                pipeline.untap(tap)
            }
        }
    }

    /// Like `activity(bufferingNewest:)` with fleet events only: a consumer of state changes
    /// (the control interface's signals, the watch clients' state records) that costs the
    /// value path nothing.
    public nonisolated func fleetEvents(bufferingNewest limit: Int = 1024) -> FleetActivityFeed {
        let feeds = self.feeds
        return FleetActivityFeed(limit: limit) { continuation, feed in
            guard let id = feeds.add(feed, continuation) else {
                continuation.finish()
                return {}
            }
            return { feeds.remove(id) }
        }
    }

    // MARK: - Inputs

    /// Applies `input` after the inputs submitted before it and returns its reply once its
    /// actions were carried out.
    @discardableResult
    func submit(_ input: FleetStateMachine.Input) async -> FleetStateMachine.Reply? {
        await withCheckedContinuation(isolation: self) { reply in schedule(input, reply: reply) }
    }

    /// Queues `input` behind those waiting and returns at once: for the facts, device outputs
    /// and timers that nobody waits on. Their producers never wait for the fleet, so what
    /// arrives while an input's actions are carried out queues up, and evaluation requests made
    /// meanwhile are served by one evaluation behind them (waiting for each input's actions, a
    /// restore of 1,000 devices ran one evaluation of every device per fact: NOTES.md).
    func enqueue(_ input: FleetStateMachine.Input) {
        schedule(input, reply: nil)
    }

    private func schedule(_ input: FleetStateMachine.Input?, reply: CheckedContinuation<FleetStateMachine.Reply?, Never>?) {
        if let input {
            if reply == nil, coalesce(input) { return }
            if reply != nil { forgetCoalescible(after: input) }
        }
        let ticket = nextTicket
        nextTicket += 1
        pending.append((input, ticket))
        if let reply { waiting[ticket] = reply }
        guard !draining else { return }
        draining = true
        drainer = Task { await self.drain() }
    }

    /// Keeps the queue bounded while the loop is busy: a change of a device's objects alone
    /// (bursts of RSSI from advertisements) replaces the device's previous such change that still
    /// waits, unless an input that reads its objects was queued after it
    /// (`forgetCoalescible`), since its objects are the complete, newer picture. Every other
    /// input (a link that came or went, a device found or lost, commands, timers) is queued and
    /// applied, never dropped. True when `input` took an earlier one's place.
    private func coalesce(_ input: FleetStateMachine.Input) -> Bool {
        guard case .device(let id, nil, _) = input else {
            forgetCoalescible(after: input)
            return false
        }
        if let ticket = coalescible[id], let first = pending.first?.ticket, ticket >= first {
            let position = Int(ticket - first)
            // Not the input at `nextToApply`: the loop may be applying it (it took a copy).
            if position > nextToApply, position < pending.count, pending[position].ticket == ticket {
                pending[position].input = input
                coalescedInputs += 1
                return true
            }
        }
        coalescible[id] = nextTicket
        return false
    }

    /// After `input` is queued, a later change of objects must come after it: it may read the
    /// same device's objects (a fact with an event, a device output, a command, a pin carrying
    /// objects) or every device's (a reload, bluetoothd, adapters), so the devices it names, or
    /// all, stop being coalescible. Timers and discovery answers read no device's objects.
    private func forgetCoalescible(after input: FleetStateMachine.Input) {
        guard !coalescible.isEmpty else { return }
        switch input {
        case .evaluate, .retryDiscovery, .discoveryFinished, .scan:
            return
        case .device(let id, _, _):
            coalescible[id] = nil
        case .deviceOutput(let output):
            coalescible[output.device] = nil
        case .command(let command):
            coalescible[command.device] = nil
        default:
            coalescible.removeAll()
        }
    }

    /// Inputs that took a waiting one's place (`coalesce`) since start.
    public private(set) var coalescedInputs: UInt64 = 0

    /// Inputs waiting to be applied now (with the one being applied).
    public var waitingInputs: Int { pending.count - nextToApply }

    /// Applies every waiting input, in order, each one's actions carried out before the next;
    /// ends when none is left (the next `schedule` starts another).
    private func drain() async {
        // Inputs, not the watchdog's probes: an idle daemon under a watchdog releases nothing.
        var applied = 0
        while nextToApply < pending.count {
            let job = pending[nextToApply]
            // The watchdog's probe (no input) is answered `done`: the loop reached it.
            let reply = if let input = job.input { await apply(input) } else { FleetStateMachine.Reply.done }
            nextToApply += 1
            if job.input != nil { applied += 1 }
            inputsApplied += 1
            waiting.removeValue(forKey: job.ticket)?.resume(returning: reply)
            // Compact now and then, so a long drain does not keep every input it applied.
            if nextToApply == 256 {
                pending.removeFirst(nextToApply)
                nextToApply = 0
            }
        }
        pending.removeAll()
        nextToApply = 0
        coalescible.removeAll()
        draining = false
        scheduleHeapRelease(inputsApplied: applied)
    }

    /// Gives the heap's free pages back to the kernel `heapReleaseInterval` after inputs were
    /// applied (one release pending at a time; none while nothing happens). What inputs bring
    /// and take away — objects of devices passing by, arrays of thousands of actions and facts
    /// after a restore or bluetoothd's return — glibc keeps mapped in its arenas once freed, so
    /// RSS would stay at its high-water mark: ~1 MB at rest at 1,000 known devices, ~4 MB after
    /// a thousand passers-by at once (NOTES.md). A release costs ~0.35 ms at 1,000 devices; at
    /// most one per interval is what a busy fleet pays.
    private func scheduleHeapRelease(inputsApplied: Int) {
        guard inputsApplied > 0, heapReleaseTimer == nil, machine.running else { return }
        let clock = self.clock
        let due = clock.now().advanced(by: Self.heapReleaseInterval)
        heapReleaseTimer = Task { [weak self] in
            do { try await clock.sleep(until: due) } catch { return }
            await self?.releaseHeap()
        }
    }

    private func releaseHeap() {
        heapReleaseTimer = nil
        wearfleet_release_free_heap()
    }

    private static let heapReleaseInterval: Duration = .seconds(10)

    // MARK: - Waiting for a link to go

    /// Waits until the fleet's records show no link for `id` (BlueZ reported it gone, or there
    /// was none): true; false once `timeout` passed with the link still up.
    func waitForLinkDown(_ id: DeviceID, timeout: Duration) async -> Bool {
        if linkIsDown(id) { return true }
        let ticket = nextLinkDownTicket
        nextLinkDownTicket += 1
        let clock = self.clock
        let deadline = clock.now().advanced(by: timeout)
        return await withCheckedContinuation(isolation: self) { waiter in
            // Cancelled when the link goes first, so no sleeping task outlives the answer.
            let timeout = Task { [weak self] in
                guard (try? await clock.sleep(until: deadline)) != nil else { return }
                await self?.endLinkDownWait(id, ticket: ticket, down: false)
            }
            linkDownWaiters[id, default: [:]][ticket] = LinkDownWaiter(continuation: waiter, timeout: timeout)
        }
    }

    /// A `Disconnect` waiting for its device's link to go, and the task that ends the wait.
    private struct LinkDownWaiter {
        let continuation: CheckedContinuation<Bool, Never>
        let timeout: Task<Void, Never>

        func answer(_ down: Bool) {
            timeout.cancel()
            continuation.resume(returning: down)
        }
    }

    private func linkIsDown(_ id: DeviceID) -> Bool {
        (machine.devices[id]?.link ?? .disconnected) == .disconnected
    }

    private func endLinkDownWait(_ id: DeviceID, ticket: UInt64, down: Bool) {
        guard let waiter = linkDownWaiters[id]?.removeValue(forKey: ticket) else { return }
        if linkDownWaiters[id]?.isEmpty == true { linkDownWaiters[id] = nil }
        waiter.answer(down)
    }

    /// After an input: answers the waiters whose device's link is gone now.
    private func answerLinkDownWaiters() {
        for id in Array(linkDownWaiters.keys) where linkIsDown(id) {
            for waiter in linkDownWaiters.removeValue(forKey: id)?.values ?? [:].values { waiter.answer(true) }
        }
    }

    private func apply(_ input: FleetStateMachine.Input) async -> FleetStateMachine.Reply? {
        let now = clock.now()
        recorder.record(input, now: now)
        let actions = machine.handle(input, now: now)
        cachedSummary = nil
        var reply: FleetStateMachine.Reply?
        for action in actions {
            if case .reply(let answer) = action {
                reply = answer
            } else {
                await execute(action)
            }
        }
        if !linkDownWaiters.isEmpty { answerLinkDownWaiters() }
        return reply
    }

    // MARK: - Actions

    private func execute(_ action: FleetStateMachine.Action) async {
        switch action {
        case .createDevice(let machine, let seed):
            let sink = outputSink
            actors[machine.device] = DeviceActor(
                machine: machine, transport: bluetooth.deviceTransport, clock: clock, seed: seed,
                recorder: recorder.device(machine.device, seed: seed, now: clock.now()), output: { sink.yield($0) })
        case .deliver(let id, let event):
            await actors[id]?.handle(event)
        case .reconfigureDevice(let id, let configuration, let reconnectPolicy):
            await actors[id]?.reconfigure(configuration, reconnectPolicy: reconnectPolicy)
        case .retireDevice(let id, let disconnect):
            await actors.removeValue(forKey: id)?.shutDown()
            bluetooth.dropNotifySockets(of: id)
            if disconnect {
                // Its outcome is BlueZ's `Connected` turning false, a fact like any other;
                // bluetoothd answers `Disconnect` only once the link is down (seconds, on a
                // busy controller), and nothing else waits for that.
                let transport = bluetooth.deviceTransport
                callBluetooth { await transport.disconnect(id) }
            }
            await writes.remove(id)
        case .shutDown(let linked, let limit):
            for (id, actor) in actors.sorted(by: { $0.key < $1.key }) {
                await actor.shutDown()
                bluetooth.dropNotifySockets(of: id)
            }
            await disconnectAll(linked, within: limit)
        case .dropNotifySockets(let id):
            bluetooth.dropNotifySockets(of: id)
        case .createCentral(let adapter):
            do {
                try bluetooth.addAdapter(adapter)
            } catch {
                logger.error("invalid adapter name", metadata: ["adapter": "\(adapter)", "error": "\(error)"])
            }
        case .centralStopped(let adapter):
            await bluetooth.adapterStopped(adapter)
        case .discover(let adapter, let call, let number):
            let bluetooth = self.bluetooth
            callBluetooth { [weak self] in
                let failure = await bluetooth.discovery(call, on: adapter)
                await self?.enqueue(.discoveryFinished(adapter, number: number, failure: failure))
            }
        case .scheduleDiscoveryRetry(let instant):
            discoveryRetryTimer?.cancel()
            discoveryRetryTimer = instant.map { instant in
                let clock = self.clock
                return Task { [weak self] in
                    do { try await clock.sleep(until: instant) } catch { return }
                    await self?.enqueue(.retryDiscovery)
                }
            }
        case .configureWrites(let id, let options):
            // The class's write timeout bounds each WriteValue call (read, not decided, here).
            await writes.configure(id, options: options, writeTimeout: classWriteTimeout(of: id))
        case .openWriteLane(let id, let useSocket):
            await writes.linkReady(id, useSocket: useSocket)
        case .closeWriteLane(let id):
            await writes.linkLost(id)
        case .requestEvaluation:
            pending.append((.evaluate, nextTicket))
            nextTicket += 1
        case .scheduleEvaluation(let instant):
            evaluationTimer?.cancel()
            evaluationTimer = nil
            guard let instant else { break }
            let clock = self.clock
            evaluationTimer = Task { [weak self] in
                do { try await clock.sleep(until: instant) } catch { return }
                await self?.enqueue(.evaluate)
            }
        case .publish(let event):
            publish(event)
        case .reply:
            break
        }
    }

    /// Runs a call to bluetoothd as a task of its own (its outcome, if the fleet needs one, comes
    /// back as an input), so the loop applying inputs goes on at once; cancelled at `stop`.
    private func callBluetooth(_ call: @escaping @Sendable () async -> Void) {
        let number = nextBluetoothCall
        nextBluetoothCall += 1
        bluetoothCalls[number] = Task { [weak self] in
            await call()
            await self?.bluetoothCallFinished(number)
        }
    }

    private func bluetoothCallFinished(_ number: UInt64) {
        bluetoothCalls[number] = nil
    }

    /// Hands a fleet event to its consumers: the journal, the observers (metrics, the state
    /// store), the activity feeds and the state stream.
    func publish(_ event: FleetEvent) {
        eventLog.record(event)
        for observer in observers { observer.observe(event) }
        feeds.publish(event)
        if case .deviceRemoved(let id, _) = event { pipeline.forget(id) }
        if case .lifecycle(let id, .stateChanged(_, let to, _, _), _, _) = event {
            stateChangeSink.yield((id, to))
        }
    }

    /// Disconnects every listed link at once, giving up after `limit`.
    private func disconnectAll(_ linked: [DeviceID], within limit: Duration) async {
        guard !linked.isEmpty else { return }
        let transport = bluetooth.deviceTransport
        let finished = await withTaskGroup(of: Bool.self) { race in
            race.addTask {
                await withTaskGroup(of: Void.self) { calls in
                    for id in linked { calls.addTask { await transport.disconnect(id) } }
                }
                return true
            }
            race.addTask {
                try? await Task.sleep(for: limit)
                return false
            }
            let first = await race.next() ?? false
            race.cancelAll()
            return first
        }
        if !finished {
            logger.warning(
                "bluetoothd did not answer every disconnect in time; stopping anyway",
                metadata: ["event": "stop_disconnect_timeout", "devices": "\(linked.count)", "limit": "\(limit)"])
        }
    }

    // MARK: - Status

    /// The one-line summary of `status()` (`STATUS=`, the control interface's `Summary`) without
    /// its per-device details: no call into any device's actor, so it stays cheap with 1,000
    /// devices and an idle daemon stays idle.
    public func summary() -> String {
        if let cachedSummary { return cachedSummary }
        var pinnedReady = 0, pinnedTotal = 0, poolConnected = 0
        var used: [AdapterID: Int] = [:]
        for device in machine.devices.values {
            if device.pinned { pinnedTotal += 1 }
            if device.state == .ready { if device.pinned { pinnedReady += 1 } else { poolConnected += 1 } }
            if let adapter = device.link.adapter { used[adapter, default: 0] += 1 }
        }
        let line = FleetStatus.summary(
            pinnedReady: pinnedReady, pinnedTotal: pinnedTotal, poolConnected: poolConnected,
            bluetoothdPresent: machine.bluetoothdPresent,
            adapters: machine.adapters.filter(\.value.selected).map { ($0.key, $0.value.powered, used[$0.key] ?? 0, machine.slots(of: $0.key)) })
        cachedSummary = line
        return line
    }

    /// The pins made at run time (not the configuration's), ordered by device.
    public var runtimePins: [FleetRuntimeConfiguration.PinnedDevice] {
        machine.runtimePins.values.sorted { $0.id < $1.id }
    }

    /// The run-time pins `command` would leave, tried on a copy of the machine; nil when it
    /// would be refused. Nothing of the fleet changes.
    func runtimePins(after command: FleetCommand) -> [FleetRuntimeConfiguration.PinnedDevice]? {
        var trial = machine
        let actions = trial.handle(.command(command), now: clock.now())
        if actions.contains(where: { if case .reply(.refused) = $0 { true } else { false } }) { return nil }
        return trial.runtimePins.values.sorted { $0.id < $1.id }
    }

    /// The pairing agent gave bluetoothd `device`'s passkey: its machine learns a bonding is
    /// under way (one bluetoothd started itself fails by ending the link, and is then counted
    /// as a failed bonding, not a radio loss).
    public func pairingKeyGiven(_ device: DeviceID) async {
        let objects = await bluetooth.objects(of: device)
        enqueue(.device(device, .pairingKeyGiven, objects: objects))
    }

    /// One device's state as the fleet machine last heard it; nil for a device it does not manage.
    public func status(of device: DeviceID) -> DeviceState? {
        machine.devices[device]?.state
    }

    /// Whether a `disconnect` holds the device (until `reconnect` or `pin`).
    func isHeld(_ device: DeviceID) -> Bool {
        machine.devices[device]?.held ?? false
    }

    /// The `write` timeout of the device's class (which bounds each `WriteValue` call).
    func classWriteTimeout(of device: DeviceID) -> Duration {
        machine.configuration.deviceConfiguration(className: machine.devices[device]?.className).timeouts.write
    }

    /// The adapter the device's link (or attempt) goes through, as the machine has it.
    func linkAdapter(of device: DeviceID) -> AdapterID? {
        machine.devices[device]?.link.adapter
    }

    /// What this gateway hears and holds of each device, for its ownership bids.
    public func ownershipObservations() -> [DeviceID: OwnershipObservation] {
        machine.ownershipObservations()
    }

    public func status() async -> FleetStatus {
        let fleet = machine
        var statusDevices: [FleetStatus.Device] = []
        for id in fleet.devices.keys.sorted() {
            guard let device = fleet.devices[id] else { continue }
            let counters = pipeline.counters(for: id)
            statusDevices.append(FleetStatus.Device(
                id: id, name: device.name, pinned: device.pinned, className: device.className, state: device.state,
                adapter: device.link.adapter, rssi: device.lastRSSI.values.max(), lastValue: counters.lastSummary,
                sessions: await actors[id]?.session ?? 0, reconnects: device.linksMade > 0 ? device.linksMade - 1 : 0,
                notifications: counters.notifications, decodeErrors: counters.decodeErrors, lastFailure: device.lastFailure,
                held: device.held, lastValueAt: counters.lastEventAt, owner: owners[id], waitingFor: fleet.waitingReason(of: id)))
        }
        var statusAdapters: [FleetStatus.Adapter] = []
        for (id, record) in fleet.adapters.sorted(by: { $0.key < $1.key }) where record.selected {
            let used = fleet.devices.values.filter { $0.link.adapter == id }.count
            let attempting = fleet.devices.values.filter { $0.link == .attempting(id) }.count
            statusAdapters.append(FleetStatus.Adapter(
                id: id, powered: record.powered, slots: fleet.slots(of: id), linksAndAttempts: used, attemptsInFlight: attempting,
                discovering: record.discovery.running, discoveryErrors: record.discovery.failures))
        }
        var status = FleetStatus(
            bluetoothdPresent: fleet.bluetoothdPresent, devices: statusDevices, adapters: statusAdapters, capturedAt: clock.now())
        status.poolEnabled = fleet.configuration.poolEnabled
        status.classNames = fleet.configuration.classes.keys.sorted()
        return status
    }
}

extension FleetOrchestrator {
    /// The longest scan `nearby(scanning:)` makes: its answer must come within a D-Bus call's
    /// usual 25 s.
    public static let longestNearbyScan: Duration = .seconds(20)

    /// The devices the radio hears that are not in the fleet (see `FleetNearbyDevice`), as
    /// bluetoothd reports them now; with `scanning`, after every selected adapter has
    /// discovered, unfiltered, for that long (at most `longestNearbyScan`) — the fleet
    /// discovers only while it looks for a device, so a gateway whose devices are all linked
    /// hears nothing new without one.
    public func nearby(scanning: Duration? = nil) async -> [FleetNearbyDevice] {
        if let scanning, scanning > .zero {
            let until = clock.now().advanced(by: min(scanning, Self.longestNearbyScan))
            // Discovery goes on a moment past the answer: bluetoothd clears every RSSI (and drops
            // devices it only heard) when discovery stops, which must not race the read below.
            enqueue(.scan(until: until.advanced(by: .seconds(1))))
            try? await clock.sleep(until: until)
        }
        let sightings = await bluetooth.sightings()
        return FleetNearbyDevice.list(sightings, excluding: machine, now: clock.now())
    }
}

extension KnownDevice {
    /// What the fleet machine takes from the state file.
    var restoredDevice: FleetStateMachine.RestoredDevice {
        FleetStateMachine.RestoredDevice(
            id: id, membership: membership == .pinned ? .pinned : .pool, name: name, servicesSeen: servicesSeen,
            lastAdapter: adapter, hasBeenReady: lastConnected != nil)
    }
}
