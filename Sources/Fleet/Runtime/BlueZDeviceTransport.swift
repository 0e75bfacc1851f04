import BlueZ
import DBus
import FleetCore
import Logging
import Synchronization

/// `DeviceTransport` over BlueZ: device operations become `Device1`/`GattCharacteristic1` calls
/// through the BlueZ client, connection attempts go through the adapter's `CentralActor`, and
/// `AcquireNotify` sockets are handed to the notification poller.
///
/// Each operation acts through one of the device's objects (one per adapter that knows it): a
/// connection attempt through the granted adapter's object only, every later operation through
/// the object of the adapter the link goes through (`on:`, which the device actor passes), so a
/// link through hci1 never touches hci0's unconnected duplicate.
public final class BlueZDeviceTransport: DeviceTransport {
    private let client: BlueZClient
    private let centrals: Mutex<[AdapterID: CentralActor]>
    private let poller: NotificationSocketPoller
    /// How long to wait for the GATT objects after `ServicesResolved` (BlueZ can announce it
    /// before exporting everything). Ends as soon as the class's requirement is met, so only a
    /// device that truly lacks it waits the whole time; 2 s was too short on a loaded 2-core
    /// host under emulation (a scale's objects were still missing while the kernel paired it).
    private let gattSettleTimeout: Duration
    /// Where failures no caller hears of are told (a `Disconnect` bluetoothd refused).
    private let logger: Logger

    public init(
        client: BlueZClient, poller: NotificationSocketPoller, gattSettleTimeout: Duration = .seconds(10),
        logger: Logger = Logger(label: "wearfleet.bluez-transport")
    ) {
        self.client = client
        self.centrals = Mutex([:])
        self.poller = poller
        self.gattSettleTimeout = gattSettleTimeout
        self.logger = logger
    }

    /// Adds the adapter's central, unless it has one already (the first one stays).
    func addCentral(_ central: CentralActor) {
        centrals.withLock { centrals in
            if centrals[central.adapter] == nil { centrals[central.adapter] = central }
        }
    }

    func central(_ adapter: AdapterID) -> CentralActor? {
        centrals.withLock { $0[adapter] }
    }

    private func failure(_ error: BlueZError) -> TransportFailure {
        TransportFailure(kind: error.kind, name: error.name, message: error.message)
    }

    /// The device's object (see `BlueZObjectTree.deviceObject(_:on:)`): `adapter`'s when one is
    /// named, else the connected one.
    private func objectPath(_ device: DeviceID, on adapter: AdapterID?) async -> DBusObjectPath? {
        await client.tree.deviceObject(device, on: adapter)?.path
    }

    public func connect(_ device: DeviceID, adapter: AdapterID) async throws(TransportFailure) -> ConnectOutcome {
        try await connect(device, adapter: adapter, within: .seconds(45))
    }

    public func connect(_ device: DeviceID, adapter: AdapterID, within timeout: Duration) async throws(TransportFailure)
        -> ConnectOutcome
    {
        guard let central = central(adapter) else {
            throw TransportFailure(.notReady, message: "adapter \(adapter) is not available")
        }
        // Only this adapter's object: without one, the central connects by address on its own
        // adapter (`Adapter1.ConnectDevice`) rather than through another adapter's object.
        let path = await objectPath(device, on: adapter)
        do {
            return try await central.connect(device, objectPath: path, timeout: Self.callTimeout(within: timeout))
        } catch {
            throw failure(error)
        }
    }

    /// bluetoothd's own bound on a pairing is its agent's (30 s for a passkey); the call is
    /// bounded below the machine's `pairing` timer, and cancelled when it runs out so that
    /// bluetoothd is not left pairing for nobody.
    static let pairCallTimeout: Duration = .seconds(24)

    public func pair(_ device: DeviceID, on adapter: AdapterID?) async throws(TransportFailure) {
        guard let path = await objectPath(device, on: adapter) else {
            throw TransportFailure(.doesNotExist, message: "bluetoothd has no object for \(device)")
        }
        do throws(BlueZError) {
            try await client.pair(device: path, timeout: Self.pairCallTimeout)
        } catch where error.kind == .alreadyExists {
            return
        } catch {
            if error.kind == .timeout { try? await client.cancelPairing(device: path) }
            throw failure(error)
        }
    }

    public func writeForSetup(
        _ device: DeviceID, characteristic uuid: String, bytes: [UInt8], on adapter: AdapterID?
    ) async throws(TransportFailure) {
        let characteristic = try await characteristic(device, uuid: uuid, on: adapter)
        do {
            try await client.writeValue(characteristic: characteristic.path, bytes, type: .request, timeout: .seconds(10))
        } catch {
            throw failure(error)
        }
    }

    public func cancelConnect(_ device: DeviceID, on adapter: AdapterID?) async {
        await disconnect(device, on: adapter)
    }

    /// `Device1.Disconnect` on `adapter`'s object for the device (nil: the connected object).
    /// Best effort: nobody waits for its outcome (the link's end is BlueZ's `Connected` false, a
    /// fact like any other), so a refusal is logged here, never thrown.
    public func disconnect(_ device: DeviceID, on adapter: AdapterID?) async {
        poller.remove(device: device)
        guard let path = await objectPath(device, on: adapter) else { return }
        do {
            try await client.disconnect(device: path)
        } catch {
            // A call our own stop cancelled (the fleet's tasks end with the daemon) is no refusal
            // of bluetoothd's: the link stays, and the next run adopts it.
            let level = Task.isCancelled ? .debug : Self.disconnectFailureLevel(error, bluetoothdOnBus: await client.owner != nil)
            let failureClass = BlueZErrorClassifier.classify(failure(error))
            var metadata: Logger.Metadata = [
                "event": "disconnect_failed", "device_address": "\(device.address)",
                "bluez_error": "\(error.name): \(error.message)", "error_class": "\(failureClass.rawValue)",
            ]
            if let adapter { metadata["adapter"] = "\(adapter)" }
            logger.log(level: level, "Device1.Disconnect failed", metadata: metadata)
        }
    }

    /// How loudly a refused `Disconnect` is logged: at debug when it says the link or its object
    /// is already gone (`NotConnected`, `DoesNotExist`, `UnknownObject`: what a disconnect
    /// racing BlueZ's own end of the link gets) or that bluetoothd is (`ServiceUnknown`,
    /// `NameHasNoOwner`, or any error once bluetoothd has left the bus): the link is down either
    /// way. Anything else may have left a link up that the fleet counts as released: a warning.
    static func disconnectFailureLevel(_ error: BlueZError, bluetoothdOnBus: Bool) -> Logger.Level {
        guard bluetoothdOnBus else { return .debug }
        switch error.kind {
        case .notConnected, .doesNotExist, .unknownObject, .serviceUnavailable: return .debug
        default: return .warning
        }
    }

    public func awaitServices(
        _ device: DeviceID, on adapter: AdapterID?
    ) async throws(TransportFailure) -> (services: Set<String>, characteristics: Set<String>) {
        try await awaitServices(device, on: adapter, requiring: GATTRequirement())
    }

    /// Waits for `ServicesResolved` and the GATT objects on `adapter`'s object for the device
    /// (nil: the connected object): those `requiring` names, or any characteristic when it names
    /// none, for at most the settle timeout (what is missing then is the machine's to judge).
    public func awaitServices(
        _ device: DeviceID, on adapter: AdapterID?, requiring: GATTRequirement
    ) async throws(TransportFailure) -> (services: Set<String>, characteristics: Set<String>) {
        guard let path = await objectPath(device, on: adapter) else {
            throw TransportFailure(.unknownObject, message: "no object for \(device)")
        }
        // The machine's discovery timer bounds the whole wait; these bounds only keep a task
        // from outliving it.
        let resolved = await client.waitForTree(timeout: .seconds(120)) { tree in
            tree.device(at: path)?.servicesResolved == true
        }
        guard resolved else {
            throw TransportFailure(.timeout, message: "services were not resolved")
        }
        _ = await client.waitForTree(timeout: gattSettleTimeout) { tree in
            let characteristics = tree.characteristics(of: path)
            guard !requiring.isEmpty else { return !characteristics.isEmpty }
            return requiring.isMet(
                services: Set(tree.services(of: path).compactMap(\.uuid)), characteristics: Set(characteristics.compactMap(\.uuid)))
        }
        let tree = await client.tree
        let services = Set(tree.services(of: path).compactMap(\.uuid))
        let characteristics = Set(tree.characteristics(of: path).compactMap(\.uuid))
        return (services, characteristics)
    }

    private func characteristic(
        _ device: DeviceID, uuid: String, on adapter: AdapterID?
    ) async throws(TransportFailure) -> BlueZCharacteristic {
        guard let path = await objectPath(device, on: adapter),
            let characteristic = await client.tree.characteristics(of: path).first(where: { $0.uuid == uuid.lowercased() })
        else {
            throw TransportFailure(.doesNotExist, message: "no characteristic \(uuid) on \(device)")
        }
        return characteristic
    }

    /// bluetoothd's `PropertiesChanged` of `Value` for every read reaches the pipeline (the
    /// client's value receivers) before `ReadValue` answers: flushed ahead of the reply since
    /// BlueZ 5.35 (commit 344df6b95, 2015), so in Debian 12's 5.66.
    public var readValuesAnnounced: Bool { true }

    /// `ReadValue` of a characteristic under `adapter`'s object for the device (nil: the
    /// connected object).
    public func read(_ device: DeviceID, characteristic uuid: String, on adapter: AdapterID?) async throws(TransportFailure) -> [UInt8] {
        let characteristic = try await characteristic(device, uuid: uuid, on: adapter)
        do {
            return try await client.readValue(characteristic: characteristic.path)
        } catch {
            throw failure(error)
        }
    }

    public func subscribe(
        _ device: DeviceID, characteristic uuid: String, via path: DeviceEffect.NotifyPath, on adapter: AdapterID?
    ) async throws(TransportFailure) {
        try await subscribe(device, characteristic: uuid, via: path, on: adapter, within: .seconds(29))
    }

    /// Subscribes to a characteristic under `adapter`'s object for the device (nil: the
    /// connected object), the call bounded by `timeout` and a margin.
    public func subscribe(
        _ device: DeviceID, characteristic uuid: String, via path: DeviceEffect.NotifyPath, on adapter: AdapterID?,
        within timeout: Duration
    ) async throws(TransportFailure) {
        let callTimeout = Self.callTimeout(within: timeout)
        let characteristic = try await characteristic(device, uuid: uuid, on: adapter)
        do throws(BlueZError) {
            // The fd path only where BlueZ offers it (`NotifyAcquired` present); else StartNotify.
            if path == .acquireNotify, characteristic.notifyAcquired != nil {
                let socket = try await client.acquireNotify(characteristic: characteristic.path, timeout: callTimeout)
                guard let fd = socket.descriptor.take() else {
                    throw BlueZError(name: DBusError.failed, message: "AcquireNotify returned no descriptor")
                }
                poller.add(fd: fd, device: device, characteristic: uuid.lowercased(), mtu: socket.mtu)
            } else {
                try await client.startNotify(characteristic: characteristic.path, timeout: callTimeout)
            }
        } catch {
            throw failure(error)
        }
    }

    public func unsubscribe(_ device: DeviceID, characteristic uuid: String, via path: DeviceEffect.NotifyPath, on adapter: AdapterID?) async {
        // A notify socket of the characteristic, if it has one, closes here; BlueZ ends that
        // session on hang-up. StopNotify ends a D-Bus session (harmless when there is none).
        poller.remove(device: device, characteristic: uuid.lowercased())
        guard let characteristic = try? await characteristic(device, uuid: uuid, on: adapter) else { return }
        if path == .startNotify || characteristic.notifyAcquired == nil {
            try? await client.stopNotify(characteristic: characteristic.path)
        }
    }
}
