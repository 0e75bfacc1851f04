import BlueZ
import DBus
import FleetCore
import Logging

/// The fleet's policy brain at run time: it owns the device actors and the adapters' central
/// actors, routes BlueZ's events to them, asks FleetCore's pool policy who should be connected
/// and which attempts may start, and publishes lifecycle changes and decoded values.
///
/// Guarantees:
/// - Attempts start only through pool-policy grants: at most one in flight per adapter, within
///   the fleet rate limit, never beyond slots or `max_connections`.
/// - Pinned devices are always pursued (resolved, connected when reachable); pool devices only
///   while the policy places them.
/// - Device outputs are processed in the order each device produced them (one stream).
public actor FleetOrchestrator {
    struct ManagedDevice {
        let actor: DeviceActor
        var pinned: Bool
        var name: String?
        var className: String?
        var priority: Int
        var wanted = false
        var wantsAttempt = false
        var link: PoolLinkStatus = .disconnected
        var state: DeviceState = .idle
        var lastRSSI: [AdapterID: Int] = [:]
        var recentFailures = 0
        /// The adapter to try when BlueZ holds no object for the device (bluetoothd forgot it):
        /// the last link's adapter, or the state file's. `Adapter1.ConnectDevice` reaches the
        /// device without a discovery; if that fails, the machine falls back to rediscovery.
        var lastAdapter: AdapterID?
        /// Links made through granted attempts (the control interface reports reconnects).
        var linksMade: UInt64 = 0
        var lastFailure: FailureClass?
    }

    struct AdapterRecord {
        let central: CentralActor
        var powered: Bool
    }

    var configuration: FleetRuntimeConfiguration {
        didSet { cachedSummary = nil }
    }
    let client: BlueZClient
    let clock: any MonotonicClock
    let logger: Logger
    let transport: BlueZDeviceTransport
    let poller: NotificationSocketPoller
    public nonisolated let pipeline: ValuePipeline
    let writes: WriteCoordinator
    /// Devices whose write options the coordinator has (reset by a reload).
    var writeConfigured: Set<DeviceID> = []
    /// Every device state change, as it happens (newest kept when nobody reads).
    public nonisolated let stateChanges: AsyncStream<(DeviceID, DeviceState)>
    private let stateChangeSink: AsyncStream<(DeviceID, DeviceState)>.Continuation
    private var translator = BlueZEventTranslator()
    var policy: PoolPolicy
    // Each change forgets `summary()`'s line (a `didSet` that does not read the old value keeps
    // mutations in place).
    var devices: [DeviceID: ManagedDevice] = [:] {
        didSet { cachedSummary = nil }
    }
    var adapters: [AdapterID: AdapterRecord] = [:] {
        didSet { cachedSummary = nil }
    }
    var bluetoothdPresent = false {
        didSet { cachedSummary = nil }
    }
    /// `summary()`'s line until something it reads changes: it is asked every 5 s (`STATUS=`)
    /// and by the control interface, and counting 1,000 devices copies each record, which was
    /// about a third of an idle daemon's CPU (perf, 1,000 known devices).
    private var cachedSummary: String?
    var running = false
    var seeds: SeededRandom
    private let outputs: AsyncStream<DeviceOutput>
    private let outputSink: AsyncStream<DeviceOutput>.Continuation
    private var tasks: [Task<Void, Never>] = []
    /// An evaluation is running (`evaluateWhileRequested`); a request made meanwhile sets
    /// `evaluationRequested` and is served by that loop.
    private var evaluating = false
    private var evaluationRequested = false
    private var grantTimer: Task<Void, Never>?
    /// Called for every `persist` effect (the state store subscribes here).
    var persistHandler: (@Sendable (DeviceID, DeviceEffect.StoreUpdate, PersistContext) -> Void)?
    /// `saveKnowledge(in:)`: persist effects queued for the store, and the task applying them.
    var finishStoreUpdates: (@Sendable () -> Void)?
    var storeWriter: Task<Void, Never>?
    /// What the state file knew at start, by device (`restore(_:)`).
    var restored: [DeviceID: KnownDevice] = [:]
    /// Told about device events as they happen (metrics); see `FleetOrchestrator+Observers`.
    var observers: [any FleetObserver] = []

    public init(
        configuration: FleetRuntimeConfiguration, client: BlueZClient, clock: any MonotonicClock = SystemMonotonicClock(),
        logger: Logger, seed: UInt64
    ) throws {
        self.configuration = configuration
        self.client = client
        self.clock = clock
        self.logger = logger
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
        self.policy = PoolPolicy(configuration: configuration.pool, now: clock.now())
        self.seeds = SeededRandom(seed: seed)
        (stateChanges, stateChangeSink) = AsyncStream<(DeviceID, DeviceState)>.makeStream(bufferingPolicy: .bufferingNewest(1024))
    }

    /// What the orchestrator knows of a device when it asks the store to save it.
    public struct PersistContext: Sendable {
        public var pinned: Bool
        public var name: String?
        public var adapter: AdapterID?
    }

    public func onPersist(_ handler: @escaping @Sendable (DeviceID, DeviceEffect.StoreUpdate, PersistContext) -> Void) {
        persistHandler = handler
    }

    // MARK: - Lifecycle

    /// Creates the pinned devices, starts following bluetoothd and returns (READY may be sent
    /// then: devices connect afterwards).
    public func start() async throws {
        running = true
        for pinned in configuration.pinned { addDevice(pinned.id, pinned: true, name: pinned.name, className: pinned.className, priority: pinned.priority) }
        addRestoredPoolDevices()
        let outputs = self.outputs
        tasks.append(Task { [weak self] in
            for await output in outputs { await self?.process(output) }
        })
        let events = client.events
        tasks.append(Task { [weak self] in
            for await event in events { await self?.route(event) }
        })
        // Notifications on the D-Bus path go straight to the pipeline on the bus thread.
        let router = CharacteristicValueRouter(pipeline: pipeline)
        await client.setValueReceivers { router.receiver(for: $0) }
        try await client.start()
        for (_, device) in devices where device.pinned {
            await device.actor.handle(.policyUpdated(wanted: true))
        }
        scheduleEvaluation()
    }

    /// Stops pursuing devices; disconnects the links the daemon made when configured to.
    public func stop() async {
        running = false
        grantTimer?.cancel()
        for (id, device) in devices {
            if configuration.disconnectOnStop {
                await device.actor.handle(.policyUpdated(wanted: false))
            }
            await device.actor.shutDown()
            poller.remove(device: id)
        }
        if configuration.disconnectOnStop {
            await disconnectAll(within: .seconds(10))
        }
        await client.stop()
        for task in tasks { task.cancel() }
        tasks.removeAll()
        finishStoreUpdates?()
        await storeWriter?.value
        poller.stop()
        pipeline.finish()
        stateChangeSink.finish()
    }

    /// Disconnects every link at once, giving up after `limit`: a hung bluetoothd must not hold
    /// the stop past systemd's `TimeoutStopSec` (each call alone may wait 25 s for a reply).
    private func disconnectAll(within limit: Duration) async {
        let linked = devices.filter { $0.value.link != .disconnected }.map(\.key)
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

    /// Proves the orchestrator's actor is responsive (the watchdog asks this).
    public func heartbeat() -> Bool { running }

    // MARK: - Devices

    @discardableResult
    func addDevice(_ id: DeviceID, pinned: Bool, name: String?, className: String?, priority: Int) -> ManagedDevice {
        if let existing = devices[id] { return existing }
        let sink = outputSink
        let machine = DeviceStateMachine(
            device: id, configuration: configuration.deviceConfiguration(className: className),
            reconnectPolicy: configuration.reconnect, servicesSeen: Set(restored[id]?.servicesSeen ?? []),
            hasBeenReady: restored[id]?.lastConnected != nil)
        let actor = DeviceActor(machine: machine, transport: transport, clock: clock, seed: seeds.next(), output: { sink.yield($0) })
        var managed = ManagedDevice(
            actor: actor, pinned: pinned, name: name ?? restored[id]?.name, className: className, priority: priority, wanted: pinned)
        managed.lastAdapter = restored[id]?.adapter
        devices[id] = managed
        notifyObservers { $0.deviceAdded(FleetObservedDevice(id: id, name: managed.name, className: className, pinned: pinned)) }
        return managed
    }

    /// A device BlueZ reports that is not pinned: a pool candidate if the pool is on and it
    /// advertises one of the pool's services.
    private func considerPoolCandidate(_ id: DeviceID) async -> Bool {
        guard configuration.poolEnabled, running else { return false }
        let tree = await client.tree
        let objects = tree.devices(address: id.address.description).filter { BlueZEventTranslator.identity(of: $0) == id }
        guard let object = objects.first else { return false }
        let name = object.alias ?? object.name
        var placement = (priority: 0, className: configuration.poolClassName)
        if let admission = configuration.poolAdmission {
            let rssi = objects.compactMap(\.rssi).max().map(Int.init)
            guard let admitted = admission.admit(name: name, services: objects.flatMap(\.uuids), rssi: rssi) else { return false }
            placement = (admitted.priority, admitted.className)
        } else if !configuration.poolServiceFilter.isEmpty,
            configuration.poolServiceFilter.isDisjoint(with: objects.flatMap(\.uuids))
        {
            return false
        }
        let managed = addDevice(id, pinned: false, name: name, className: placement.className, priority: placement.priority)
        await managed.actor.handle(.bluetoothdAppeared)
        for (adapter, record) in adapters where record.powered {
            await managed.actor.handle(.adapterPowered(adapter))
        }
        return true
    }

    // MARK: - BlueZ events

    private func route(_ event: BlueZEvent) async {
        let tree = await client.tree
        for routed in translator.translate(event, tree: tree) {
            switch routed {
            case .everyone(let deviceEvent):
                if case .adapterPowered(let adapter) = deviceEvent, !isSelected(adapter) { continue }
                if case .adapterUnpowered(let adapter) = deviceEvent, !isSelected(adapter) { continue }
                noteCentral(deviceEvent)
                for (_, device) in devices { await device.actor.handle(deviceEvent) }
                if case .bluetoothdAppeared = deviceEvent { await offerLastAdapters(tree: tree) }
                scheduleEvaluation()
            case .device(let id, let deviceEvent):
                if devices[id] == nil, !(await considerPoolCandidate(id)) { continue }
                noteLink(id, deviceEvent, tree: tree)
                await devices[id]?.actor.handle(deviceEvent)
                scheduleEvaluation()
            case .value(let id, let characteristic, let bytes):
                pipeline.ingest(device: id, characteristic: characteristic, bytes: bytes)
            case .adapterChanged(let adapter, let powered):
                await adapterChanged(adapter, powered: powered)
            case .adapterRemoved(let adapter):
                adapters[adapter]?.powered = false
                await adapters[adapter]?.central.discoveryStopped()
                scheduleEvaluation()
            }
        }
    }

    private func noteCentral(_ event: DeviceEvent) {
        switch event {
        case .bluetoothdAppeared:
            bluetoothdPresent = true
            logger.notice("bluetoothd appeared", metadata: ["event": "bluetoothd_appeared"])
        case .bluetoothdVanished:
            bluetoothdPresent = false
            logger.warning("bluetoothd vanished; every device is suspended until it returns", metadata: ["event": "bluetoothd_vanished"])
            for id in devices.keys { devices[id]?.link = .disconnected }
        default: break
        }
    }

    private func noteLink(_ id: DeviceID, _ event: DeviceEvent, tree: BlueZObjectTree) {
        switch event {
        case .connected:
            if case .connected = devices[id]?.link { return }
            let adapter = devices[id]?.link.adapter
                ?? tree.devices(address: id.address.description).first(where: \.connected).map(BlueZEventTranslator.adapter(of:))
            if let adapter {
                devices[id]?.link = .connected(adapter, since: clock.now())
                devices[id]?.lastAdapter = adapter
            }
        case .disconnected, .deviceLost:
            devices[id]?.link = .disconnected
            poller.remove(device: id)
        default:
            break
        }
    }

    func adapterChanged(_ adapter: AdapterID, powered: Bool) async {
        guard isSelected(adapter) else { return }
        if adapters[adapter] == nil {
            do {
                let central = try CentralActor(
                    adapter: adapter, client: client, scanUUIDs: configuration.scanUUIDs, minimumRSSI: configuration.minimumRSSI)
                adapters[adapter] = AdapterRecord(central: central, powered: powered)
                transport.setCentrals(adapters.mapValues(\.central))
            } catch {
                logger.error("invalid adapter name", metadata: ["adapter": "\(adapter)", "error": "\(error)"])
                return
            }
        }
        if adapters[adapter]?.powered != powered {
            logger.log(
                level: powered ? .info : .warning, powered ? "adapter powered" : "adapter powered off",
                metadata: ["adapter": "\(adapter)", "event": powered ? "adapter_powered" : "adapter_unpowered"])
        }
        adapters[adapter]?.powered = powered
        if powered {
            await adapters[adapter]?.central.resume()
        } else {
            await adapters[adapter]?.central.discoveryStopped()
        }
        scheduleEvaluation()
    }

    // MARK: - Device outputs

    private func process(_ output: DeviceOutput) async {
        switch output {
        case .requestAttempt(let id):
            devices[id]?.wantsAttempt = true
            scheduleEvaluation()
        case .withdrawAttemptRequest(let id):
            devices[id]?.wantsAttempt = false
            scheduleEvaluation()
        case .attemptFinished(let id, let adapter, let outcome):
            policy.attemptFinished(device: id)
            switch outcome {
            case .connected:
                devices[id]?.link = .connected(adapter, since: clock.now())
                devices[id]?.lastAdapter = adapter
                devices[id]?.recentFailures = 0
                devices[id]?.linksMade += 1
            case .failed:
                devices[id]?.link = .disconnected
                devices[id]?.recentFailures += 1
            case .cancelled:
                devices[id]?.link = .disconnected
            }
            scheduleEvaluation()
        case .persist(let id, let update):
            guard let device = devices[id] else { break }
            persistHandler?(id, update, PersistContext(pinned: device.pinned, name: device.name, adapter: device.link.adapter ?? device.lastAdapter))
        case .lifecycle(let id, let event):
            log(id, event)
            if case .failed(let failureClass, _, _) = event { devices[id]?.lastFailure = failureClass }
            let now = clock.now()
            notifyObservers { $0.lifecycle(id, event, at: now) }
            if case .stateChanged(let from, let to, _, _) = event {
                devices[id]?.state = to
                await followWritability(id, from: from, to: to)
                stateChangeSink.yield((id, to))
            }
        case .value(let id, let characteristic, let bytes):
            pipeline.ingest(device: id, characteristic: characteristic, bytes: bytes)
        case .resumeWrites(let id):
            if let device = devices[id], device.state.acceptsWrites {
                await writes.linkReady(id, useSocket: configuration.deviceConfiguration(className: device.className).useFileDescriptorPath)
            }
        case .writeOutcome(let id, let event):
            await devices[id]?.actor.handle(event)
        }
    }

    private func log(_ id: DeviceID, _ event: DeviceEffect.LifecycleEvent) {
        var metadata: Logger.Metadata = ["device_address": "\(id.address)", "event": "state_changed"]
        if let name = devices[id]?.name { metadata["device_name"] = "\(name)" }
        switch event {
        case .stateChanged(let from, let to, let session, let cause):
            metadata["device_state"] = "\(to.name)"
            metadata["previous_state"] = "\(from.name)"
            metadata["session_id"] = "\(session)"
            if let adapter = devices[id]?.link.adapter { metadata["adapter"] = "\(adapter)" }
            if let cause { metadata["error_class"] = "\(cause.rawValue)" }
            // Suspended and degraded say why (`suspended(noPoweredAdapter)`), so a change of reason
            // alone is not logged as a puzzling "suspended → suspended".
            let detail: (DeviceState) -> String = { state in
                switch state {
                case .suspended, .degraded: state.description
                default: state.name
                }
            }
            if case .suspended = to { metadata["state_reason"] = "\(to.description)" }
            if case .degraded = to { metadata["state_reason"] = "\(to.description)" }
            let level: Logger.Level = to == .ready ? .notice : (cause == nil ? .info : .warning)
            logger.log(level: level, "device \(detail(from)) → \(detail(to))", metadata: metadata)
        case .failed(let failureClass, let error, let session):
            metadata["event"] = "failed"
            metadata["session_id"] = "\(session)"
            metadata["error_class"] = "\(failureClass.rawValue)"
            if let error { metadata["bluez_error"] = "\(error.name): \(error.message)" }
            logger.warning("device failure: \(failureClass.rawValue)", metadata: metadata)
        case .setupProblem(let characteristic, let error, let session):
            metadata["event"] = "setup_problem"
            metadata["session_id"] = "\(session)"
            metadata["characteristic"] = "\(characteristic)"
            if let error { metadata["bluez_error"] = "\(error.name): \(error.message)" }
            logger.warning("characteristic setup failed", metadata: metadata)
        }
    }

    // MARK: - Pool policy

    /// Asks for a pool evaluation. Requests coalesce, and evaluations run one at a time: an
    /// evaluation suspends while the device actors take its plan, and letting another start
    /// meanwhile (as each event asked for one) piled up dozens of 1,000-device snapshots at once
    /// while a large fleet was restored, each judged on a stale view of the links.
    func scheduleEvaluation() {
        evaluationRequested = true
        guard !evaluating else { return }
        evaluating = true
        Task { await self.evaluateWhileRequested() }
    }

    private func evaluateWhileRequested() async {
        while evaluationRequested {
            evaluationRequested = false
            await evaluate()
        }
        evaluating = false
    }

    private func evaluate() async {
        guard running else { return }
        let tree = await client.tree
        let now = clock.now()
        var snapshots: [PoolDeviceSnapshot] = []
        // Sorting the keys, not (key, record) pairs: with 1,000 devices, copying the records
        // while sorting was most of an evaluation's cost.
        for id in devices.keys.sorted() {
            guard let device = devices[id] else { continue }
            var rssi = device.lastRSSI
            var connectable: Set<AdapterID> = []
            for object in tree.devices(address: id.address.description) where BlueZEventTranslator.identity(of: object) == id {
                let adapter = BlueZEventTranslator.adapter(of: object)
                connectable.insert(adapter)
                if let value = object.rssi { rssi[adapter] = Int(value) }
                // A device pinned without a name is shown and logged under the name it advertises.
                if devices[id]?.name == nil, let advertised = object.alias ?? object.name { devices[id]?.name = advertised }
            }
            // bluetoothd forgot the device: its last adapter can still reach it with ConnectDevice.
            if connectable.isEmpty, let last = device.lastAdapter, adapters[last]?.powered == true { connectable.insert(last) }
            devices[id]?.lastRSSI = rssi
            snapshots.append(PoolDeviceSnapshot(
                id: id, membership: device.pinned ? .pinned : .pool, isEligible: true, configuredPriority: device.priority,
                rssi: rssi, knownConnectable: connectable, link: device.link, wantsAttempt: device.wantsAttempt,
                restoreInProgress: false, recentFailures: device.recentFailures))
        }
        let adapterSnapshots = adapters.map { AdapterSnapshot(id: $0.key, isPowered: $0.value.powered) }
        let plan = policy.evaluate(
            devices: snapshots, adapters: adapterSnapshots,
            conditions: PoolCentralConditions(bluetoothdPresent: bluetoothdPresent, engineRunning: running), now: now)
        await apply(plan)
        await updatePoolSearch()
    }

    /// The pool looks for candidates (discovery) on powered adapters with a free slot, while the
    /// fleet is under `max_connections`.
    private func updatePoolSearch() async {
        // One pass over the devices, however many adapters (this runs after every evaluation).
        var links = 0
        var used: [AdapterID: Int] = [:]
        for device in devices.values where device.link != .disconnected {
            links += 1
            if let adapter = device.link.adapter { used[adapter, default: 0] += 1 }
        }
        let fleetHasRoom = configuration.poolEnabled && links < configuration.pool.maxConnections
        for (id, record) in adapters {
            await record.central.setPoolSearching(fleetHasRoom && record.powered && used[id, default: 0] < slots(of: id))
        }
    }

    private func apply(_ plan: PoolPlan) async {
        for eviction in plan.evictions {
            guard let device = devices[eviction.device], !device.pinned, device.wanted else { continue }
            devices[eviction.device]?.wanted = false
            logger.info("evicting pool device", metadata: [
                "device_address": "\(eviction.device.address)", "adapter": "\(eviction.adapter)", "event": "evicted",
                "reason": "\(eviction.reason)",
            ])
            await device.actor.handle(.policyUpdated(wanted: false))
        }
        for (id, device) in devices where !device.pinned {
            let wanted = plan.isWanted(id)
            if wanted != device.wanted {
                devices[id]?.wanted = wanted
                await device.actor.handle(.policyUpdated(wanted: wanted))
            }
        }
        for grant in plan.grants {
            guard devices[grant.device]?.wantsAttempt == true else {
                policy.attemptFinished(device: grant.device)
                continue
            }
            devices[grant.device]?.wantsAttempt = false
            devices[grant.device]?.link = .attempting(grant.adapter)
            let now = clock.now()
            notifyObservers { $0.attemptGranted(grant.device, adapter: grant.adapter, at: now) }
            await devices[grant.device]?.actor.handle(.attemptGranted(adapter: grant.adapter))
        }
        grantTimer?.cancel()
        if let next = plan.nextGrantInstant {
            let clock = self.clock
            grantTimer = Task { [weak self] in
                do { try await clock.sleep(until: next) } catch { return }
                await self?.scheduleEvaluation()
            }
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
        for device in devices.values {
            if device.pinned { pinnedTotal += 1 }
            if device.state == .ready { if device.pinned { pinnedReady += 1 } else { poolConnected += 1 } }
            if let adapter = device.link.adapter { used[adapter, default: 0] += 1 }
        }
        let line = FleetStatus.summary(
            pinnedReady: pinnedReady, pinnedTotal: pinnedTotal, poolConnected: poolConnected, bluetoothdPresent: bluetoothdPresent,
            adapters: adapters.map { ($0.key, $0.value.powered, used[$0.key] ?? 0, slots(of: $0.key)) })
        cachedSummary = line
        return line
    }

    /// LE connection slots the fleet may use on `adapter`.
    func slots(of adapter: AdapterID) -> Int {
        configuration.pool.slotOverrides[adapter] ?? configuration.pool.defaultSlotsPerAdapter
    }

    public func status() async -> FleetStatus {
        var statusDevices: [FleetStatus.Device] = []
        for id in devices.keys.sorted() {
            guard let device = devices[id] else { continue }
            let counters = pipeline.counters(for: id)
            statusDevices.append(FleetStatus.Device(
                id: id, name: device.name, pinned: device.pinned, className: device.className, state: device.state,
                adapter: device.link.adapter, rssi: device.lastRSSI.values.max(), lastValue: counters.lastSummary,
                sessions: await device.actor.session, reconnects: device.linksMade > 0 ? device.linksMade - 1 : 0,
                notifications: counters.notifications, decodeErrors: counters.decodeErrors, lastFailure: device.lastFailure))
        }
        var statusAdapters: [FleetStatus.Adapter] = []
        for (id, record) in adapters.sorted(by: { $0.key < $1.key }) {
            let used = devices.values.filter { $0.link.adapter == id }.count
            let attempting = devices.values.filter { $0.link == .attempting(id) }.count
            statusAdapters.append(FleetStatus.Adapter(
                id: id, powered: record.powered,
                slots: slots(of: id), linksAndAttempts: used, attemptsInFlight: attempting, discovering: await record.central.isDiscovering))
        }
        return FleetStatus(
            bluetoothdPresent: bluetoothdPresent, devices: statusDevices, adapters: statusAdapters, capturedAt: clock.now())
    }
}
