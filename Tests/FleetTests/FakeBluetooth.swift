import Fleet
import FleetCore
import Synchronization
import TestSupport

/// A bluetoothd for the executor that lives in memory: a world of adapters and device objects
/// the test changes, facts the executor hears as BlueZ would report them, and a record of every
/// call. Connections always succeed and every characteristic the world lists is there. A test can
/// make `Disconnect` or the discovery calls hang (`hang`), as a busy controller or a wedged
/// bluetoothd does: such a call answers only when its task is cancelled.
final class FakeBluetooth: FleetBluetooth, DeviceTransport {
    struct World {
        var adapters: [AdapterID: Bool] = [:]
        var objects: [DeviceID: [AdapterID: FleetStateMachine.DeviceObject]] = [:]
        var calls: [String] = []
        var discovering: Set<AdapterID> = []
        /// The filter each adapter's discovery last took.
        var filters: [AdapterID: DiscoveryFilter] = [:]
        var hung: Set<HungCall> = []
    }

    /// Calls that never answer while set.
    enum HungCall: Hashable {
        case disconnect, discovery
        /// Not a call to bluetoothd: the executor's own bookkeeping when an adapter stops, hung
        /// here to stand for a loop that stops applying inputs.
        case adapterStopped
    }

    private let world = Mutex(World())
    private let factSink: AsyncStream<FleetStateMachine.Input>.Continuation
    private let factStream: AsyncStream<FleetStateMachine.Input>
    let services: Set<String>
    let characteristics: Set<String>

    init(services: Set<String>, characteristics: Set<String>) {
        (factStream, factSink) = AsyncStream.makeStream()
        self.services = services
        self.characteristics = characteristics
    }

    var calls: [String] { world.withLock { $0.calls } }
    var discovering: Set<AdapterID> { world.withLock { $0.discovering } }

    /// Waits until a call matching `match` was made (checked every 10 ms, for at most 60 s).
    func waitForCall(_ what: String, _ match: @escaping @Sendable (String) -> Bool) async throws {
        try await withTimeout(.seconds(60), what) {
            while !self.calls.contains(where: match) { try await Task.sleep(for: .milliseconds(10)) }
        }
    }

    /// From now on, calls of `kind` do not answer (until their task is cancelled).
    func hang(_ kind: HungCall) { world.withLock { _ = $0.hung.insert(kind) } }

    /// The calls of `kind` answer again, those waiting included.
    func release(_ kind: HungCall) { world.withLock { _ = $0.hung.remove(kind) } }

    /// Waits as a call bluetoothd does not answer does: until the caller gives up (cancels), or
    /// the test releases it (checked every 10 ms).
    private func hangIf(_ kind: HungCall) async {
        while world.withLock({ $0.hung.contains(kind) }), !Task.isCancelled { try? await Task.sleep(for: .milliseconds(10)) }
    }

    /// RSSI changes of a device's object, as advertisements bring them (objects alone, no event).
    func rssi(_ value: Int, of id: DeviceID, on adapter: AdapterID) {
        let all = world.withLock { world -> [FleetStateMachine.DeviceObject] in
            world.objects[id]?[adapter]?.rssi = value
            return Self.sorted(world.objects[id])
        }
        factSink.yield(.device(id, nil, objects: all))
    }
    private func record(_ call: String) { world.withLock { $0.calls.append(call) } }

    // MARK: - The test's side

    /// bluetoothd takes its name with these adapters (powered) and device objects.
    func appear(adapters: [AdapterID], objects: [DeviceID: [FleetStateMachine.DeviceObject]] = [:]) {
        let held = world.withLock { world -> Set<DeviceID> in
            world.adapters = Dictionary(uniqueKeysWithValues: adapters.map { ($0, true) })
            world.objects = objects.mapValues { Dictionary(uniqueKeysWithValues: $0.map { ($0.adapter, $0) }) }
            return Set(objects.keys)
        }
        factSink.yield(.bluetoothdAppeared(held: held, adapters: Set(adapters), powered: Set(adapters)))
        for adapter in adapters.sorted() {
            factSink.yield(.adapterChanged(adapter, powered: true))
            factSink.yield(.adapterPowerChanged(adapter, powered: true))
        }
        for (id, list) in objects.sorted(by: { $0.key < $1.key }) {
            for object in list { factSink.yield(.device(id, .deviceFound(adapter: object.adapter), objects: list)) }
        }
    }

    func vanish() {
        let adapters = world.withLock { world -> [AdapterID] in
            defer { world = World(calls: world.calls, hung: world.hung) }
            return world.adapters.filter(\.value).map(\.key).sorted()
        }
        for adapter in adapters { factSink.yield(.adapterRemoved(adapter)) }
        factSink.yield(.bluetoothdVanished)
    }

    /// The device's link drops (out of range, supervision timeout), as BlueZ reports it.
    func dropLink(_ id: DeviceID) {
        let objects = world.withLock { world -> [FleetStateMachine.DeviceObject] in
            for adapter in (world.objects[id] ?? [:]).keys { world.objects[id]?[adapter]?.connected = false }
            return Self.sorted(world.objects[id])
        }
        factSink.yield(.device(id, .disconnected(DeviceEvent.Failure(.disconnectedByTimeout)), objects: objects))
    }

    /// An adapter powers off, as BlueZ reports it.
    func powerOff(_ adapter: AdapterID) {
        world.withLock { $0.adapters[adapter] = false }
        factSink.yield(.adapterChanged(adapter, powered: false))
        factSink.yield(.adapterPowerChanged(adapter, powered: false))
    }

    /// A device object appears on an adapter (discovery heard it).
    func add(_ object: FleetStateMachine.DeviceObject, for id: DeviceID) {
        let all = world.withLock { world -> [FleetStateMachine.DeviceObject] in
            world.objects[id, default: [:]][object.adapter] = object
            return Self.sorted(world.objects[id])
        }
        factSink.yield(.device(id, .deviceFound(adapter: object.adapter), objects: all))
    }

    private static func sorted(_ objects: [AdapterID: FleetStateMachine.DeviceObject]?) -> [FleetStateMachine.DeviceObject] {
        (objects ?? [:]).values.sorted { $0.adapter < $1.adapter }
    }

    // MARK: - FleetBluetooth

    func facts() -> AsyncStream<FleetStateMachine.Input> { factStream }
    /// bluetoothd appears when the test says so (`appear`), never at start.
    func start() async throws -> Bool {
        record("start")
        return false
    }
    func stop() async {
        record("stop")
        factSink.finish()
    }
    func objects(of device: DeviceID) async -> [FleetStateMachine.DeviceObject] {
        world.withLock { Self.sorted($0.objects[device]) }
    }
    /// Every object of the world, heard now when it has an RSSI.
    func sightings() async -> [FleetSighting] {
        world.withLock { world in
            world.objects.sorted { $0.key < $1.key }.flatMap { id, objects in
                Self.sorted(objects).map { FleetSighting(id: id, object: $0) }
            }
        }
    }
    func pair(_ device: DeviceID, on adapter: AdapterID?, timeout: Duration) async throws(DeviceEvent.Failure) {
        record("pair \(device)")
    }
    func unpair(_ device: DeviceID) async throws(DeviceEvent.Failure) {
        record("unpair \(device)")
    }
    var deviceTransport: any DeviceTransport { self }
    func dropNotifySockets(of device: DeviceID) {}
    func addAdapter(_ adapter: AdapterID) throws { record("addAdapter \(adapter)") }
    func adapterStopped(_ adapter: AdapterID) async {
        record("adapterStopped \(adapter)")
        await hangIf(.adapterStopped)
    }
    /// As bluetoothd does: a filter is kept, discovery starts and stops; `NotReady` on an
    /// adapter that is off or gone.
    func discovery(_ call: DiscoveryCall, on adapter: AdapterID) async -> DeviceEvent.Failure? {
        let description: String =
            switch call {
            case .setFilter(let filter): "discovery \(adapter) filter \(filter.uuids) \(filter.minimumRSSI.map(String.init) ?? "any")"
            case .start: "discovery \(adapter) start"
            case .stop: "discovery \(adapter) stop"
            }
        record(description)
        await hangIf(.discovery)
        return world.withLock { world -> DeviceEvent.Failure? in
            guard world.adapters[adapter] == true else { return DeviceEvent.Failure(.notReady, message: "Resource Not Ready") }
            switch call {
            case .setFilter(let filter): world.filters[adapter] = filter
            case .start: world.discovering.insert(adapter)
            case .stop: world.discovering.remove(adapter)
            }
            return nil
        }
    }

    func characteristic(_ uuid: String, of device: DeviceID) async -> FleetCharacteristic? {
        characteristics.contains(uuid) ? FleetCharacteristic(handle: uuid, flags: [.read, .write, .notify]) : nil
    }
    func writeValue(_ bytes: [UInt8], to characteristic: FleetCharacteristic, withResponse: Bool) async throws(DeviceEvent.Failure) {
        record("write \(characteristic.handle) \(bytes)")
    }
    func acquireWrite(_ characteristic: FleetCharacteristic) async -> (descriptor: Int32, mtu: UInt16)? { nil }

    // MARK: - DeviceTransport

    func connect(_ device: DeviceID, adapter: AdapterID) async throws(TransportFailure) -> ConnectOutcome {
        let known = world.withLock { world -> Bool in
            world.calls.append("connect \(device.address) \(adapter)")
            guard world.adapters[adapter] == true else { return false }
            world.objects[device, default: [:]][adapter, default: FleetStateMachine.DeviceObject(adapter: adapter)].connected = true
            return true
        }
        guard known else { throw TransportFailure(.notReady, message: "adapter \(adapter) is off") }
        return .connected
    }
    func cancelConnect(_ device: DeviceID, on adapter: AdapterID?) async { record("cancelConnect \(device.address)") }
    func pair(_ device: DeviceID, on adapter: AdapterID?) async throws(TransportFailure) { record("pair \(device.address)") }
    func writeForSetup(_ device: DeviceID, characteristic: String, bytes: [UInt8], on adapter: AdapterID?) async throws(TransportFailure) {
        record("writeForSetup \(device.address) \(characteristic)")
    }
    /// As bluetoothd does: the link goes, and `Connected` turning false is reported.
    func disconnect(_ device: DeviceID, on adapter: AdapterID?) async {
        record("disconnect \(device.address)")
        await hangIf(.disconnect)
        let linked = world.withLock { world -> [FleetStateMachine.DeviceObject]? in
            let wasConnected = world.objects[device]?.values.contains { $0.connected } ?? false
            for adapter in (world.objects[device] ?? [:]).keys { world.objects[device]?[adapter]?.connected = false }
            return wasConnected ? Self.sorted(world.objects[device]) : nil
        }
        if let linked { factSink.yield(.device(device, .disconnected(nil), objects: linked)) }
    }
    func awaitServices(_ device: DeviceID, on adapter: AdapterID?) async throws(TransportFailure)
        -> (services: Set<String>, characteristics: Set<String>)
    {
        (services, characteristics)
    }
    func read(_ device: DeviceID, characteristic: String, on adapter: AdapterID?) async throws(TransportFailure) -> [UInt8] { [42] }
    func subscribe(_ device: DeviceID, characteristic: String, via path: DeviceEffect.NotifyPath, on adapter: AdapterID?)
        async throws(TransportFailure) {}
    func unsubscribe(_ device: DeviceID, characteristic: String, via path: DeviceEffect.NotifyPath, on adapter: AdapterID?) async {}
}
