import BlueZ
import DBus
import FleetCore

/// Turns what the BlueZ client saw (its typed `BlueZEvent`s) into FleetCore's normalized events,
/// so device machines never see object paths or BlueZ version differences. It reads no variant:
/// the client parsed each signal once, where it applied it to its mirror.
///
/// Pure apart from its memory of which object path is which device (learned from the devices
/// the events announce) and of which adapters are powered: feed it every event, in order.
public struct BlueZEventTranslator: Sendable {
    /// Where an event goes.
    public enum Routed: Sendable, Hashable {
        /// To every device (adapters, bluetoothd).
        case everyone(DeviceEvent)
        case device(DeviceID, DeviceEvent)
        /// A device object's `Connected` changed, or a device was announced connected: its
        /// machine hears `connected` or a reasonless `disconnected`, and the fleet learns on which
        /// adapter. The mirror may be past it when it is turned into an input (a link reported up
        /// and lost again before then), so the adapter travels with it.
        case connection(DeviceID, connected: Bool, adapter: AdapterID)
        /// A device object's RSSI, name or services changed: only the fleet cares (placement,
        /// admission, names), its machine hears nothing.
        case deviceUpdated(DeviceID)
        /// A device object's `Paired` changed: its machine hears whether any of its objects is
        /// paired now (read from the mirror).
        case pairingChanged(DeviceID)
        /// A characteristic value changed (a notification on the D-Bus path).
        case value(DeviceID, characteristic: String, bytes: [UInt8])
        /// An adapter object appeared or changed (for the central side: discovery, slots).
        case adapterChanged(AdapterID, powered: Bool)
        case adapterRemoved(AdapterID)
    }

    /// The device properties the fleet decides with (placement's RSSI, admission's name and
    /// services); a change of any other makes no input.
    static let fleetFacts: BlueZDeviceFields = [.rssi, .name, .alias, .uuids]

    /// Device object path → identity, learned from the devices announced.
    public private(set) var devices: [DBusObjectPath: DeviceID] = [:]
    /// Device object path → the adapter it belongs to (BlueZ's `Adapter` property, as
    /// announced), for the connection events, which carry it.
    private var adaptersOfDevices: [DBusObjectPath: AdapterID] = [:]
    private var poweredAdapters: Set<AdapterID> = []

    public init() {}

    public mutating func translate(_ event: BlueZEvent) -> [Routed] {
        switch event {
        case .appeared(_, let adapters, let devices):
            return rebuild(adapters: adapters, devices: devices)
        case .vanished:
            devices.removeAll()
            adaptersOfDevices.removeAll()
            let adapters = poweredAdapters
            poweredAdapters.removeAll()
            return adapters.sorted().map { .adapterRemoved($0) } + [.everyone(.bluetoothdVanished)]
        case .adapterAdded(let adapter):
            return adapterState(AdapterID(adapter.name), powered: adapter.powered)
        case .adapterPowerChanged(let adapter, let powered):
            return adapterState(adapter, powered: powered)
        case .adapterRemoved(let adapter):
            var routed: [Routed] = []
            if poweredAdapters.remove(adapter) != nil { routed.append(.everyone(.adapterUnpowered(adapter))) }
            routed.append(.adapterRemoved(adapter))
            return routed
        case .deviceAdded(let device):
            return found(device)
        case .deviceRemoved(let path, _):
            adaptersOfDevices[path] = nil
            guard let id = devices.removeValue(forKey: path) else { return [] }
            return [.device(id, .deviceLost)]
        case .deviceConnectionChanged(let path, let connected):
            guard let id = devices[path] else { return [] }
            let adapter = adaptersOfDevices[path] ?? AdapterID((path.parent ?? .root).lastElement)
            return [.connection(id, connected: connected, adapter: adapter)]
        case .deviceUpdated(let path, let fields):
            guard let id = devices[path] else { return [] }
            var routed: [Routed] = []
            if fields.contains(.paired) { routed.append(.pairingChanged(id)) }
            if !fields.isDisjoint(with: Self.fleetFacts) { routed.append(.deviceUpdated(id)) }
            return routed
        case .deviceDisconnected(let path, let reason, let message):
            guard let id = devices[path] else { return [] }
            return [.device(id, .disconnected(DeviceEvent.Failure(name: reason, message: message)))]
        case .valueChanged(let characteristic, let bytes):
            guard let id = characteristic.deviceIdentity else { return [] }
            return [.value(id, characteristic: characteristic.uuid, bytes: bytes)]
        case .servicesResolvedChanged:
            // A device machine that resolves waits for `ServicesResolved` and the GATT objects
            // itself (`DeviceTransport.awaitServices`, over `BlueZClient.waitForTree`), and the
            // services a device advertises or resolved reach the fleet as a `UUIDs` change.
            return []
        case .gattObjectAdded, .gattObjectRemoved, .notifyingChanged, .malformedSignal, .snapshotFailed:
            // A failed tree fetch changes nothing the fleet sees: bluetoothd is not present until
            // a fetch succeeds (`appeared`). `BlueZFleetBluetooth` logs it.
            return []
        }
    }

    private mutating func rebuild(adapters: [BlueZAdapter], devices found: [BlueZDevice]) -> [Routed] {
        devices.removeAll()
        adaptersOfDevices.removeAll()
        var routed: [Routed] = [.everyone(.bluetoothdAppeared)]
        for adapter in adapters {
            routed += adapterState(AdapterID(adapter.name), powered: adapter.powered)
        }
        // A link that survived our restart is adopted by the machine if it is wanted.
        for device in found { routed += self.found(device) }
        return routed
    }

    /// A device object bluetoothd holds: its identity learned, found on its adapter, and
    /// connected if it is.
    private mutating func found(_ device: BlueZDevice) -> [Routed] {
        guard let id = device.identity else { return [] }
        devices[device.path] = id
        adaptersOfDevices[device.path] = device.adapterID
        // Paired first, so the machine decides at once what a found device needs. Only a paired
        // object says so: bonds are per adapter, and another adapter's unpaired duplicate (heard
        // while discovering) must not make a bonded device look unpaired — it would bond again.
        // The machine forgets `Paired` itself when the device's object goes.
        var routed: [Routed] = device.paired ? [.device(id, .pairedChanged(true))] : []
        routed.append(.device(id, .deviceFound(adapter: device.adapterID)))
        if device.connected { routed.append(.connection(id, connected: true, adapter: device.adapterID)) }
        return routed
    }

    private mutating func adapterState(_ adapter: AdapterID, powered: Bool) -> [Routed] {
        var routed: [Routed] = [.adapterChanged(adapter, powered: powered)]
        if powered, poweredAdapters.insert(adapter).inserted {
            routed.append(.everyone(.adapterPowered(adapter)))
        } else if !powered, poweredAdapters.remove(adapter) != nil {
            routed.append(.everyone(.adapterUnpowered(adapter)))
        }
        return routed
    }
}
