import Fleet
import FleetCore
import Synchronization

/// A bluetoothd for the executor that lives in memory: a world of adapters and device objects
/// the test changes, facts the executor hears as BlueZ would report them, and a record of every
/// call. Connections always succeed and every characteristic the world lists is there.
final class FakeBluetooth: FleetBluetooth, DeviceTransport {
    struct World {
        var adapters: [AdapterID: Bool] = [:]
        var objects: [DeviceID: [AdapterID: FleetStateMachine.DeviceObject]] = [:]
        var calls: [String] = []
        var discovering: Set<AdapterID> = []
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
    private func record(_ call: String) { world.withLock { $0.calls.append(call) } }

    // MARK: - The test's side

    /// bluetoothd takes its name with these adapters (powered) and device objects.
    func appear(adapters: [AdapterID], objects: [DeviceID: [FleetStateMachine.DeviceObject]] = [:]) {
        let held = world.withLock { world -> Set<DeviceID> in
            world.adapters = Dictionary(uniqueKeysWithValues: adapters.map { ($0, true) })
            world.objects = objects.mapValues { Dictionary(uniqueKeysWithValues: $0.map { ($0.adapter, $0) }) }
            return Set(objects.keys)
        }
        factSink.yield(.bluetoothdAppeared(held: held, adapters: Set(adapters)))
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
            defer { world = World(calls: world.calls) }
            return world.adapters.filter(\.value).map(\.key).sorted()
        }
        for adapter in adapters { factSink.yield(.adapterRemoved(adapter)) }
        factSink.yield(.bluetoothdVanished)
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
    func start() async throws { record("start") }
    func stop() async {
        record("stop")
        factSink.finish()
    }
    func objects(of device: DeviceID) async -> [FleetStateMachine.DeviceObject] {
        world.withLock { Self.sorted($0.objects[device]) }
    }
    var deviceTransport: any DeviceTransport { self }
    func dropNotifySockets(of device: DeviceID) {}
    func addAdapter(_ adapter: AdapterID, scanUUIDs: [String], minimumRSSI: Int16?) async throws { record("addAdapter \(adapter)") }
    func resumeDiscovery(on adapter: AdapterID) async {}
    func discoveryStopped(on adapter: AdapterID) async {}
    func setPoolSearching(_ searching: Bool, on adapter: AdapterID) async {
        record("poolSearching \(adapter) \(searching)")
    }
    func updateScanFilter(scanUUIDs: [String], minimumRSSI: Int16?) async { record("scanFilter \(scanUUIDs)") }
    func isDiscovering(on adapter: AdapterID) async -> Bool { world.withLock { $0.discovering.contains(adapter) } }

    func characteristic(_ uuid: String, of device: DeviceID) async -> FleetCharacteristic? {
        characteristics.contains(uuid) ? FleetCharacteristic(handle: uuid, flags: [.read, .write, .notify]) : nil
    }
    func writeValue(_ bytes: [UInt8], to characteristic: FleetCharacteristic, withResponse: Bool) async throws(DeviceEvent.Failure) {
        record("write \(characteristic.handle) \(bytes)")
    }
    func acquireWrite(_ characteristic: FleetCharacteristic) async -> (descriptor: Int32, mtu: UInt16)? { nil }

    // MARK: - DeviceTransport

    func startResolve(_ device: DeviceID) async { record("startResolve \(device.address)") }
    func stopResolve(_ device: DeviceID) async { record("stopResolve \(device.address)") }
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
    /// As bluetoothd does: the link goes, and `Connected` turning false is reported.
    func disconnect(_ device: DeviceID, on adapter: AdapterID?) async {
        let linked = world.withLock { world -> [FleetStateMachine.DeviceObject]? in
            world.calls.append("disconnect \(device.address)")
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
