import BlueZ
import DBus
import FleetCore
import Logging

/// The fleet at run time: the executor of FleetCore's `FleetStateMachine`. It turns what BlueZ,
/// the device actors, timers and callers report into the machine's inputs, one at a time, and
/// carries out the actions each returns, in order: device actors, the adapters' central actors,
/// the write path, the state store and the fleet's event consumers (log, observers, stream).
///
/// Guarantees:
/// - Decisions are the machine's alone: this actor keeps only the things that execute them
///   (actors, centrals, timers) and takes no decision between two `await`s.
/// - Inputs are applied in the order they were submitted, each one's actions carried out before
///   the next input is applied, so no input sees a half-applied change (a reload included).
/// - Device outputs are processed in the order each device produced them (one stream).
public actor FleetOrchestrator {
    public typealias ReloadSummary = FleetStateMachine.ReloadSummary
    public typealias PersistContext = FleetStateMachine.PersistContext

    private var machine: FleetStateMachine
    let client: BlueZClient
    let clock: any MonotonicClock
    let logger: Logger
    let transport: BlueZDeviceTransport
    let poller: NotificationSocketPoller
    public nonisolated let pipeline: ValuePipeline
    let writes: WriteCoordinator
    private var actors: [DeviceID: DeviceActor] = [:]
    private var centrals: [AdapterID: CentralActor] = [:]
    /// Every device state change, as it happens (newest kept when nobody reads).
    public nonisolated let stateChanges: AsyncStream<(DeviceID, DeviceState)>
    private let stateChangeSink: AsyncStream<(DeviceID, DeviceState)>.Continuation
    private let outputs: AsyncStream<DeviceOutput>
    private let outputSink: AsyncStream<DeviceOutput>.Continuation
    private var tasks: [Task<Void, Never>] = []
    private var evaluationTimer: Task<Void, Never>?
    /// `summary()`'s line until the next input is applied: it is asked every 5 s (`STATUS=`)
    /// and by the control interface; see NOTES.md on an idle daemon's CPU.
    private var cachedSummary: String?
    /// Inputs waiting to be applied, with the caller waiting for each reply (if any).
    private var pending: [(input: FleetStateMachine.Input, ticket: UInt64)] = []
    private var nextTicket: UInt64 = 0
    private var waiting: [UInt64: CheckedContinuation<FleetStateMachine.Reply?, Never>] = [:]
    private var draining = false
    /// Called for every `persist` action (the state store subscribes here).
    var persistHandler: (@Sendable (DeviceID, DeviceEffect.StoreUpdate, PersistContext) -> Void)?
    /// `saveKnowledge(in:)`: persist effects queued for the store, and the task applying them.
    var finishStoreUpdates: (@Sendable () -> Void)?
    var storeWriter: Task<Void, Never>?
    /// Told about fleet events as they happen (metrics); see `FleetOrchestrator+Observers`.
    var observers: [any FleetObserver] = []
    private let eventLog: FleetEventLog

    public init(
        configuration: FleetRuntimeConfiguration, client: BlueZClient, clock: any MonotonicClock = SystemMonotonicClock(),
        logger: Logger, seed: UInt64
    ) throws {
        self.machine = FleetStateMachine(configuration: configuration, now: clock.now(), seed: seed)
        self.client = client
        self.clock = clock
        self.logger = logger
        self.eventLog = FleetEventLog(logger: logger)
        let pipeline = ValuePipeline(logger: logger)
        self.pipeline = pipeline
        let poller = try NotificationSocketPoller { device, characteristic in
            pipeline.source(device: device, characteristic: characteristic).receive
        }
        self.poller = poller
        self.transport = BlueZDeviceTransport(client: client, poller: poller)
        let (outputs, outputSink) = AsyncStream<DeviceOutput>.makeStream()
        self.outputs = outputs
        self.outputSink = outputSink
        self.writes = WriteCoordinator(client: client, clock: clock) { device, event in
            outputSink.yield(.writeOutcome(device, event))
        }
        (stateChanges, stateChangeSink) = AsyncStream<(DeviceID, DeviceState)>.makeStream(bufferingPolicy: .bufferingNewest(1024))
    }

    public func onPersist(_ handler: @escaping @Sendable (DeviceID, DeviceEffect.StoreUpdate, PersistContext) -> Void) {
        persistHandler = handler
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
                    await self?.submit(.deviceOutput(output))
                }
            }
        })
        let events = client.events
        let client = self.client
        tasks.append(Task { [weak self] in
            var translator = BlueZEventTranslator()
            for await event in events {
                let tree = await client.tree
                for routed in translator.translate(event, tree: tree) {
                    guard let input = Self.input(for: routed, tree: tree, pipeline: pipeline) else { continue }
                    await self?.submit(input)
                }
            }
        })
        // Notifications on the D-Bus path go straight to the pipeline on the bus thread.
        let router = CharacteristicValueRouter(pipeline: pipeline)
        await client.setValueReceivers { router.receiver(for: $0) }
        try await client.start()
        await submit(.started)
    }

    /// Stops pursuing devices; disconnects the links the daemon made when configured to.
    public func stop() async {
        await submit(.stop)
        await client.stop()
        for task in tasks { task.cancel() }
        tasks.removeAll()
        evaluationTimer?.cancel()
        finishStoreUpdates?()
        await storeWriter?.value
        poller.stop()
        pipeline.finish()
        stateChangeSink.finish()
    }

    /// Proves the orchestrator's actor is responsive (the watchdog asks this).
    public func heartbeat() -> Bool { machine.running }

    /// Hands the state file's devices to the fleet. Call before `start()`.
    public func restore(_ known: [KnownDevice]) async {
        await submit(.restore(known.map(\.restoredDevice)))
    }

    /// Applies a reloaded, already validated configuration, as one input.
    @discardableResult
    public func reconfigure(_ new: FleetRuntimeConfiguration) async -> ReloadSummary {
        let tree = await client.tree
        var objects: [DeviceID: [FleetStateMachine.DeviceObject]] = [:]
        for pinned in new.pinned { objects[pinned.id] = Self.objects(of: pinned.id, in: tree) }
        guard case .reloaded(let summary)? = await submit(.reload(new, objects: objects)) else { return ReloadSummary() }
        return summary
    }

    // MARK: - Inputs

    /// Applies `input` after the inputs submitted before it and returns its reply once its
    /// actions were carried out. The first caller to find nothing being applied applies every
    /// input waiting (its own and those submitted meanwhile), in order.
    @discardableResult
    func submit(_ input: FleetStateMachine.Input) async -> FleetStateMachine.Reply? {
        let ticket = nextTicket
        nextTicket += 1
        pending.append((input, ticket))
        guard !draining else {
            return await withCheckedContinuation(isolation: self) { waiting[ticket] = $0 }
        }
        draining = true
        var ownReply: FleetStateMachine.Reply?
        var index = 0
        while index < pending.count {
            let job = pending[index]
            index += 1
            // Compact now and then, so a long drain does not keep every input it applied.
            if index == 256 {
                pending.removeFirst(index)
                index = 0
            }
            let reply = await apply(job.input)
            if job.ticket == ticket {
                ownReply = reply
            } else {
                waiting.removeValue(forKey: job.ticket)?.resume(returning: reply)
            }
        }
        pending.removeAll()
        draining = false
        return ownReply
    }

    private func apply(_ input: FleetStateMachine.Input) async -> FleetStateMachine.Reply? {
        let actions = machine.handle(input, now: clock.now())
        cachedSummary = nil
        var reply: FleetStateMachine.Reply?
        for action in actions {
            if case .reply(let answer) = action {
                reply = answer
            } else {
                await execute(action)
            }
        }
        return reply
    }

    /// Turns what the BlueZ client saw into the machine's input; values go to the pipeline.
    private static func input(
        for routed: BlueZEventTranslator.Routed, tree: BlueZObjectTree, pipeline: ValuePipeline
    ) -> FleetStateMachine.Input? {
        switch routed {
        case .everyone(.bluetoothdAppeared):
            return .bluetoothdAppeared(
                held: Set(tree.devices.compactMap(\.identity)),
                adapters: Set(tree.adapters.map { AdapterID($0.name) }))
        case .everyone(.bluetoothdVanished):
            return .bluetoothdVanished
        case .everyone(.adapterPowered(let adapter)):
            return .adapterPowerChanged(adapter, powered: true)
        case .everyone(.adapterUnpowered(let adapter)):
            return .adapterPowerChanged(adapter, powered: false)
        case .everyone:
            return nil
        case .device(let id, let event):
            return .device(id, event, objects: objects(of: id, in: tree))
        case .deviceUpdated(let id):
            return .device(id, nil, objects: objects(of: id, in: tree))
        case .value(let id, let characteristic, let bytes):
            pipeline.ingest(device: id, characteristic: characteristic, bytes: bytes)
            return nil
        case .adapterChanged(let adapter, let powered):
            return .adapterChanged(adapter, powered: powered)
        case .adapterRemoved(let adapter):
            return .adapterRemoved(adapter)
        }
    }

    /// BlueZ's objects for `id`, on every adapter that has one.
    static func objects(of id: DeviceID, in tree: BlueZObjectTree) -> [FleetStateMachine.DeviceObject] {
        tree.devices(id).map { object in
            FleetStateMachine.DeviceObject(
                adapter: object.adapterID, name: object.alias ?? object.name, services: object.uuids,
                rssi: object.rssi.map(Int.init), connected: object.connected)
        }
    }

    // MARK: - Actions

    private func execute(_ action: FleetStateMachine.Action) async {
        switch action {
        case .createDevice(let machine, let seed):
            let sink = outputSink
            actors[machine.device] = DeviceActor(
                machine: machine, transport: transport, clock: clock, seed: seed, output: { sink.yield($0) })
        case .deliver(let id, let event):
            await actors[id]?.handle(event)
        case .reconfigureDevice(let id, let configuration, let reconnectPolicy):
            await actors[id]?.reconfigure(configuration, reconnectPolicy: reconnectPolicy)
        case .retireDevice(let id, let disconnect):
            await actors.removeValue(forKey: id)?.shutDown()
            poller.remove(device: id)
            if disconnect { await transport.disconnect(id) }
            await writes.remove(id)
        case .shutDown(let linked, let limit):
            for (id, actor) in actors.sorted(by: { $0.key < $1.key }) {
                await actor.shutDown()
                poller.remove(device: id)
            }
            await disconnectAll(linked, within: limit)
        case .dropNotifySockets(let id):
            poller.remove(device: id)
        case .createCentral(let adapter, let scanUUIDs, let minimumRSSI):
            guard centrals[adapter] == nil else { break }
            do {
                centrals[adapter] = try CentralActor(adapter: adapter, client: client, scanUUIDs: scanUUIDs, minimumRSSI: minimumRSSI)
                transport.setCentrals(centrals)
            } catch {
                logger.error("invalid adapter name", metadata: ["adapter": "\(adapter)", "error": "\(error)"])
            }
        case .resumeCentral(let adapter):
            await centrals[adapter]?.resume()
        case .centralStopped(let adapter):
            await centrals[adapter]?.discoveryStopped()
        case .setPoolSearching(let adapter, let searching):
            await centrals[adapter]?.setPoolSearching(searching)
        case .updateScanFilter(let scanUUIDs, let minimumRSSI):
            for (_, central) in centrals.sorted(by: { $0.key < $1.key }) {
                await central.updateFilter(scanUUIDs: scanUUIDs, minimumRSSI: minimumRSSI)
            }
        case .configureWrites(let id, let options):
            await writes.configure(id, options: options)
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
                await self?.submit(.evaluate)
            }
        case .persist(let id, let update, let context):
            persistHandler?(id, update, context)
        case .publish(let event):
            publish(event)
        case .reply:
            break
        }
    }

    /// Hands a fleet event to its consumers: the journal, the observers, the state stream.
    private func publish(_ event: FleetEvent) {
        eventLog.record(event)
        for observer in observers { observer.observe(event) }
        if case .lifecycle(let id, .stateChanged(_, let to, _, _), _, _) = event {
            stateChangeSink.yield((id, to))
        }
    }

    /// Disconnects every listed link at once, giving up after `limit`.
    private func disconnectAll(_ linked: [DeviceID], within limit: Duration) async {
        guard !linked.isEmpty else { return }
        let transport = self.transport
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

    /// One device's state as the fleet machine last heard it; nil for a device it does not manage.
    public func status(of device: DeviceID) -> DeviceState? {
        machine.devices[device]?.state
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
                notifications: counters.notifications, decodeErrors: counters.decodeErrors, lastFailure: device.lastFailure))
        }
        var statusAdapters: [FleetStatus.Adapter] = []
        for (id, record) in fleet.adapters.sorted(by: { $0.key < $1.key }) where record.selected {
            let used = fleet.devices.values.filter { $0.link.adapter == id }.count
            let attempting = fleet.devices.values.filter { $0.link == .attempting(id) }.count
            statusAdapters.append(FleetStatus.Adapter(
                id: id, powered: record.powered, slots: fleet.slots(of: id), linksAndAttempts: used, attemptsInFlight: attempting,
                discovering: await centrals[id]?.isDiscovering ?? false))
        }
        return FleetStatus(
            bluetoothdPresent: fleet.bluetoothdPresent, devices: statusDevices, adapters: statusAdapters, capturedAt: clock.now())
    }
}

extension KnownDevice {
    /// What the fleet machine takes from the state file.
    var restoredDevice: FleetStateMachine.RestoredDevice {
        FleetStateMachine.RestoredDevice(
            id: id, membership: membership == .pinned ? .pinned : .pool, name: name, servicesSeen: Set(servicesSeen),
            lastAdapter: adapter, hasBeenReady: lastConnected != nil)
    }
}
