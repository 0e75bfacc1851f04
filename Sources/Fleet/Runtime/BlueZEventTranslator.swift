import BlueZ
import DBus
import FleetCore

/// Turns what the BlueZ client saw into FleetCore's normalized events, so device machines never
/// see object paths, variants or BlueZ version differences.
///
/// Pure apart from its memory of which object path is which device: feed it every `BlueZEvent`
/// together with the mirror as it is *after* the event.
public struct BlueZEventTranslator: Sendable {
    /// Where an event goes.
    public enum Routed: Sendable, Hashable {
        /// To every device (adapters, bluetoothd).
        case everyone(DeviceEvent)
        case device(DeviceID, DeviceEvent)
        /// A device object's RSSI, name or services changed: only the fleet cares (placement,
        /// admission, names), its machine hears nothing.
        case deviceUpdated(DeviceID)
        /// A characteristic value changed (a notification on the D-Bus path).
        case value(DeviceID, characteristic: String, bytes: [UInt8])
        /// An adapter object appeared or changed (for the central side: discovery, slots).
        case adapterChanged(AdapterID, powered: Bool)
        case adapterRemoved(AdapterID)
    }

    /// Device object path → identity, learned from `Device1` properties.
    public private(set) var devices: [DBusObjectPath: DeviceID] = [:]
    private var poweredAdapters: Set<AdapterID> = []

    public init() {}

    /// The identity of a `Device1` object: address plus address type.
    public static func identity(of device: BlueZDevice) -> DeviceID? {
        device.identity
    }

    /// The identity of a device from its `Address` and `AddressType` as bluetoothd spells them
    /// (a missing or unknown type is `public`, BlueZ's default); nil without a valid address.
    public static func identity(address text: String?, addressType: String?) -> DeviceID? {
        DeviceID(bluezAddress: text, addressType: addressType)
    }

    /// The adapter a device object lives under (`/org/bluez/hci0/dev_…` → `hci0`).
    public static func adapter(of device: BlueZDevice) -> AdapterID {
        device.adapterID
    }

    public mutating func translate(_ event: BlueZEvent, tree: BlueZObjectTree) -> [Routed] {
        switch event {
        case .appeared:
            return rebuild(from: tree)
        case .vanished:
            devices.removeAll()
            let adapters = poweredAdapters
            poweredAdapters.removeAll()
            return adapters.sorted().map { .adapterRemoved($0) } + [.everyone(.bluetoothdVanished)]
        case .interfacesAdded(let path, let interfaces):
            var routed: [Routed] = []
            if interfaces.contains(BlueZInterfaces.adapter), let adapter = tree.adapter(at: path) {
                routed += adapterState(AdapterID(adapter.name), powered: adapter.powered)
            }
            if interfaces.contains(BlueZInterfaces.device), let device = tree.device(at: path), let id = Self.identity(of: device) {
                devices[path] = id
                routed.append(.device(id, .deviceFound(adapter: Self.adapter(of: device))))
                if device.connected { routed.append(.device(id, .connected)) }
            }
            return routed
        case .interfacesRemoved(let path, let interfaces):
            var routed: [Routed] = []
            if interfaces.contains(BlueZInterfaces.device), let id = devices.removeValue(forKey: path) {
                routed.append(.device(id, .deviceLost))
            }
            if interfaces.contains(BlueZInterfaces.adapter) {
                let adapter = AdapterID(path.lastElement)
                if poweredAdapters.remove(adapter) != nil { routed.append(.everyone(.adapterUnpowered(adapter))) }
                routed.append(.adapterRemoved(adapter))
            }
            return routed
        case .propertiesChanged(let path, let interface, let changed, _):
            return propertiesChanged(path, interface: interface, changed: changed, tree: tree)
        case .deviceDisconnected(let path, let reason, let message):
            guard let id = devices[path] else { return [] }
            return [.device(id, .disconnected(DeviceEvent.Failure(name: reason, message: message)))]
        case .malformedSignal:
            return []
        }
    }

    private mutating func rebuild(from tree: BlueZObjectTree) -> [Routed] {
        devices.removeAll()
        var routed: [Routed] = [.everyone(.bluetoothdAppeared)]
        for adapter in tree.adapters {
            routed += adapterState(AdapterID(adapter.name), powered: adapter.powered)
        }
        for device in tree.devices {
            guard let id = Self.identity(of: device) else { continue }
            devices[device.path] = id
            routed.append(.device(id, .deviceFound(adapter: Self.adapter(of: device))))
            // A link that survived our restart is adopted by the machine if it is wanted.
            if device.connected { routed.append(.device(id, .connected)) }
        }
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

    private mutating func propertiesChanged(
        _ path: DBusObjectPath, interface: String, changed: [String: DBusValue], tree: BlueZObjectTree
    ) -> [Routed] {
        switch interface {
        case BlueZInterfaces.adapter:
            guard case .boolean(let powered)? = changed["Powered"] else { return [] }
            return adapterState(AdapterID(path.lastElement), powered: powered)
        case BlueZInterfaces.device:
            guard let id = devices[path] else { return [] }
            if case .boolean(let connected)? = changed["Connected"] {
                return [.device(id, connected ? .connected : .disconnected(nil))]
            }
            let fleetFacts = ["RSSI", "Name", "Alias", "UUIDs"]
            return fleetFacts.contains(where: { changed[$0] != nil }) ? [.deviceUpdated(id)] : []
        case BlueZInterfaces.gattCharacteristic:
            guard case .array(.byte, let items)? = changed["Value"],
                let characteristic = tree.objects[path]?[BlueZInterfaces.gattCharacteristic],
                case .string(let uuid)? = characteristic["UUID"],
                let id = owningDevice(of: path)
            else { return [] }
            var bytes: [UInt8] = []
            bytes.reserveCapacity(items.count)
            for case .byte(let byte) in items { bytes.append(byte) }
            return [.value(id, characteristic: uuid.lowercased(), bytes: bytes)]
        default:
            return []
        }
    }

    /// `…/dev_X/serviceNNNN/charNNNN` belongs to `…/dev_X`.
    private func owningDevice(of path: DBusObjectPath) -> DeviceID? {
        var candidate = path.parent
        while let current = candidate {
            if let id = devices[current] { return id }
            candidate = current.parent
        }
        return nil
    }
}
