import BlueZ
import DBus
import FleetCore
import Logging
import Synchronization

/// `FleetBluetooth` over BlueZ's D-Bus API: the client's mirror and events become fleet inputs
/// (`BlueZEventTranslator`), each adapter has a `CentralActor`, device operations go through
/// `BlueZDeviceTransport`, and AcquireNotify sockets are read by one `NotificationSocketPoller`.
public final class BlueZFleetBluetooth: FleetBluetooth {
    let client: BlueZClient
    let poller: NotificationSocketPoller
    private let pipeline: ValuePipeline
    /// Notify sockets bluetoothd closed (the link may still be up): see `facts()`.
    private let hangUps: AsyncStream<(DeviceID, String)>
    /// Also the owner of the adapters' centrals (connection attempts go through them).
    private let transport: BlueZDeviceTransport
    /// Where bluetoothd's failures that reach no device are told (tree fetches, discovery).
    private let logger: Logger
    /// When bluetoothd last reported hearing each device object (`sightings()`), kept by the facts
    /// loop from the client's events.
    private let hearings = Hearings()
    private let clock: any MonotonicClock

    /// `pipeline` receives the values of notification sockets (the fd path); `logger` hears
    /// what the centrals learn of bluetoothd.
    public init(client: BlueZClient, pipeline: ValuePipeline, clock: any MonotonicClock = SystemMonotonicClock(), logger: Logger) throws {
        self.client = client
        self.clock = clock
        self.pipeline = pipeline
        self.logger = logger
        let (hangUps, hangUpSink) = AsyncStream<(DeviceID, String)>.makeStream()
        self.hangUps = hangUps
        let poller = try NotificationSocketPoller(
            receivers: { device, characteristic in pipeline.source(device: device, characteristic: characteristic).receive },
            hungUp: { device, characteristic in hangUpSink.yield((device, characteristic)) })
        self.poller = poller
        self.transport = BlueZDeviceTransport(client: client, poller: poller, logger: logger)
    }

    public var deviceTransport: any DeviceTransport { transport }

    public func facts() -> AsyncStream<FleetStateMachine.Input> {
        let pipeline = self.pipeline
        let (facts, sink) = AsyncStream<FleetStateMachine.Input>.makeStream()
        let events = client.events
        let client = self.client
        let logger = self.logger
        let hearings = self.hearings
        let clock = self.clock
        let task = Task {
            var translator = BlueZEventTranslator()
            for await event in events {
                hearings.note(event, now: clock.now())
                if case .snapshotFailed(let attempt, let error, let retryIn) = event {
                    Self.logSnapshotFailure(attempt: attempt, error: error, retryIn: retryIn, logger: logger)
                }
                let routed = translator.translate(event)
                if routed.isEmpty { continue }
                // A value (a notification that took the events' way) needs nothing of the mirror.
                if routed.count == 1, case .value(let device, let characteristic, let bytes) = routed[0] {
                    pipeline.ingest(device: device, characteristic: characteristic, bytes: bytes)
                    continue
                }
                let tree = await client.tree
                for routed in routed {
                    if let input = Self.input(for: routed, tree: tree, pipeline: pipeline) { sink.yield(input) }
                }
            }
            sink.finish()
        }
        // A notify socket bluetoothd closed while the device is still connected is a subscription
        // lost: the device machine hears it as a failed subscription (degraded, and subscribed
        // again by its recovery timer) rather than staying ready with nothing arriving. A socket
        // closed because the link dropped is not reported: the disconnect says it all.
        let hangUps = self.hangUps
        let hangUpTask = Task {
            for await (device, characteristic) in hangUps {
                let objects = Self.objects(of: device, in: await client.tree)
                guard objects.contains(where: \.connected) else { continue }
                let failure = DeviceEvent.Failure(
                    kind: .failed, name: "org.bluez.Error.Failed",
                    message: "bluetoothd closed the notify socket of \(characteristic) while the link stayed up")
                sink.yield(.device(device, .subscribeFailed(characteristic: characteristic, failure), objects: objects))
            }
        }
        sink.onTermination = { _ in
            task.cancel()
            hangUpTask.cancel()
        }
        return facts
    }

    public func start() async throws -> Bool {
        // Notifications on the D-Bus path go straight to the pipeline on the bus thread.
        let router = CharacteristicValueRouter(pipeline: pipeline)
        await client.setValueReceivers { router.receiver(for: $0) }
        try await client.start()
        return await client.objectsRead
    }

    public func stop() async {
        await client.stop()
        poller.stop()
    }

    public func objects(of device: DeviceID) async -> [FleetStateMachine.DeviceObject] {
        Self.objects(of: device, in: await client.tree)
    }

    public func pair(_ device: DeviceID, on adapter: AdapterID?, timeout: Duration) async throws(DeviceEvent.Failure) {
        let tree = await client.tree
        guard let object = adapter.flatMap({ tree.device(device, on: $0) }) ?? tree.devices(device).first else {
            throw DeviceEvent.Failure(.doesNotExist, message: "bluetoothd has no object for \(device)")
        }
        do throws(BlueZError) {
            try await client.pair(device: object.path, timeout: timeout)
        } catch {
            if error.kind == .timeout { try? await client.cancelPairing(device: object.path) }
            throw DeviceEvent.Failure(kind: error.kind, name: error.name, message: error.message)
        }
    }

    public func unpair(_ device: DeviceID) async throws(DeviceEvent.Failure) {
        let objects = await client.tree.devices(device)
        guard !objects.isEmpty else { throw DeviceEvent.Failure(.doesNotExist, message: "bluetoothd has no object for \(device)") }
        for object in objects {
            guard let adapter = object.adapter else { continue }
            do throws(BlueZError) {
                try await client.removeDevice(adapter: adapter, device: object.path)
            } catch {
                throw DeviceEvent.Failure(kind: error.kind, name: error.name, message: error.message)
            }
        }
    }

    public func sightings() async -> [FleetSighting] {
        let tree = await client.tree
        let heard = hearings.snapshot
        return tree.devices.compactMap { device in
            guard let id = device.identity else { return nil }
            let object = FleetStateMachine.DeviceObject(
                adapter: device.adapterID, name: device.alias ?? device.name, services: device.uuids, rssi: device.rssi.map(Int.init),
                connected: device.connected, paired: device.paired)
            return FleetSighting(id: id, object: object, paired: device.paired, reportedAt: heard[device.path])
        }
    }

    /// When bluetoothd last reported hearing each device object: it reports RSSI and TX power
    /// only from advertisements (and inquiry), so a device object that comes with one, or an
    /// update of one, is a report (not every advertisement is: see `FleetSighting.reportedAt`).
    /// Written by the facts loop, read by `sightings()`.
    final class Hearings: Sendable {
        private let heard = Mutex<[DBusObjectPath: MonotonicInstant]>([:])

        var snapshot: [DBusObjectPath: MonotonicInstant] { heard.withLock { $0 } }

        func note(_ event: BlueZEvent, now: MonotonicInstant) {
            switch event {
            case .appeared(_, _, let devices):
                heard.withLock { heard in
                    heard = [:]
                    for device in devices where device.rssi != nil { heard[device.path] = now }
                }
            case .vanished:
                heard.withLock { $0 = [:] }
            case .deviceAdded(let device) where device.rssi != nil || device.txPower != nil:
                heard.withLock { $0[device.path] = now }
            case .deviceUpdated(let path, let fields) where !fields.isDisjoint(with: [.rssi, .txPower]):
                heard.withLock { $0[path] = now }
            case .deviceRemoved(let path, _):
                heard.withLock { _ = $0.removeValue(forKey: path) }
            default:
                break
            }
        }
    }

    public func dropNotifySockets(of device: DeviceID) {
        poller.remove(device: device)
    }

    /// bluetoothd owns its name but its object tree could not be read: warned at the first
    /// failures and then at every tenth, so a bluetoothd that stays broken is seen in the
    /// journal without flooding it.
    static func logSnapshotFailure(attempt: Int, error: String, retryIn: Duration, logger: Logger) {
        guard attempt <= 3 || attempt % 10 == 0 else { return }
        logger.warning("bluetoothd's object tree could not be read; trying again", metadata: [
            "event": "bluez_tree_failed", "attempt": "\(attempt)", "bluez_error": "\(error)", "retry_in": "\(retryIn)",
        ])
    }

    // MARK: - Translation

    /// Turns what the BlueZ client saw into the machine's input; values go to the pipeline.
    static func input(
        for routed: BlueZEventTranslator.Routed, tree: BlueZObjectTree, pipeline: ValuePipeline
    ) -> FleetStateMachine.Input? {
        switch routed {
        case .everyone(.bluetoothdAppeared):
            return .bluetoothdAppeared(
                held: Set(tree.devices.compactMap(\.identity)), adapters: Set(tree.adapters.map { AdapterID($0.name) }),
                powered: Set(tree.adapters.filter(\.powered).map { AdapterID($0.name) }))
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
        case .connection(let id, let connected, let adapter):
            return .device(
                id, connected ? .connected : .disconnected(nil),
                objects: objects(of: id, in: tree, asConnected: connected, on: adapter))
        case .deviceUpdated(let id):
            return .device(id, nil, objects: objects(of: id, in: tree))
        case .pairingChanged(let id):
            let paired = tree.devices(id).contains(where: \.paired)
            return .device(id, .pairedChanged(paired), objects: objects(of: id, in: tree))
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
                rssi: object.rssi.map(Int.init), connected: object.connected, paired: object.paired)
        }
    }

    /// BlueZ's objects for `id`, with the `Connected` of its object on `adapter` as the
    /// connection event left it (the rest is the mirror's when the event is handled). The
    /// mirror may already hold what came after the event (seen on the real stack, loaded: a link
    /// the restarted bluetoothd announced was lost before the announcement was handled, and the
    /// fleet, finding no connected object, could not place the link, nor later name its loss as
    /// the restart's). For a link that came up, its object goes first, as the one the fleet
    /// places the link by, and one removed since is put back bare: its removal follows as an
    /// event of its own.
    static func objects(
        of id: DeviceID, in tree: BlueZObjectTree, asConnected connected: Bool, on adapter: AdapterID
    ) -> [FleetStateMachine.DeviceObject] {
        var objects = objects(of: id, in: tree)
        let index = objects.firstIndex { $0.adapter == adapter }
        guard connected else {
            if let index { objects[index].connected = false }
            return objects
        }
        var linked = index.map { objects.remove(at: $0) } ?? FleetStateMachine.DeviceObject(adapter: adapter)
        linked.connected = true
        return [linked] + objects
    }

    // MARK: - Adapters

    private func central(_ adapter: AdapterID) -> CentralActor? {
        transport.central(adapter)
    }

    public func addAdapter(_ adapter: AdapterID) throws {
        guard central(adapter) == nil else { return }
        transport.addCentral(try CentralActor(adapter: adapter, client: client, logger: logger))
    }

    public func adapterStopped(_ adapter: AdapterID) async {
        await central(adapter)?.stopped()
    }

    public func discovery(_ call: DiscoveryCall, on adapter: AdapterID) async -> DeviceEvent.Failure? {
        guard let central = central(adapter) else { return DeviceEvent.Failure(.noSuchAdapter, message: "no central for \(adapter)") }
        do {
            try await central.perform(call)
            return nil
        } catch {
            return DeviceEvent.Failure(kind: error.kind, name: error.name, message: error.message)
        }
    }

    // MARK: - Characteristics and writes

    /// The characteristic under the device's connected object, else under any of its objects in
    /// path order.
    private func characteristicObject(_ uuid: String, of device: DeviceID) async -> BlueZCharacteristic? {
        let tree = await client.tree
        let objects = tree.devices(device)
        for object in objects.filter(\.connected) + objects.filter({ !$0.connected }) {
            if let found = tree.characteristics(of: object.path).first(where: { $0.uuid == uuid }) { return found }
        }
        return nil
    }

    public func characteristic(_ uuid: String, of device: DeviceID) async -> FleetCharacteristic? {
        guard let object = await characteristicObject(uuid, of: device) else { return nil }
        return FleetCharacteristic(handle: object.path.rawValue, flags: object.flags, writeAcquirable: object.writeAcquired != nil)
    }

    public func writeValue(_ bytes: [UInt8], to characteristic: FleetCharacteristic, withResponse: Bool) async throws(DeviceEvent.Failure) {
        try await writeValue(bytes, to: characteristic, withResponse: withResponse, within: .seconds(29))
    }

    public func writeValue(
        _ bytes: [UInt8], to characteristic: FleetCharacteristic, withResponse: Bool, within timeout: Duration
    ) async throws(DeviceEvent.Failure) {
        guard let path = try? DBusObjectPath(characteristic.handle) else {
            throw DeviceEvent.Failure(.doesNotExist, message: "no characteristic object \(characteristic.handle)")
        }
        do {
            try await client.writeValue(
                characteristic: path, bytes, type: withResponse ? .request : .command,
                timeout: BlueZDeviceTransport.callTimeout(within: timeout))
        } catch {
            throw DeviceEvent.Failure(kind: error.kind, name: error.name, message: error.message)
        }
    }

    public func acquireWrite(_ characteristic: FleetCharacteristic) async -> (descriptor: Int32, mtu: UInt16)? {
        guard characteristic.writeAcquirable, let path = try? DBusObjectPath(characteristic.handle),
            let acquired = try? await client.acquireWrite(characteristic: path),
            let descriptor = acquired.descriptor.take()
        else { return nil }
        return (descriptor, acquired.mtu)
    }
}
