import BluetoothVocabulary
import DBus

/// The client's mirror of bluetoothd's object tree: built from one `GetManagedObjects`, then kept
/// current by `InterfacesAdded`, `InterfacesRemoved` and `PropertiesChanged`.
///
/// Only BlueZ's adapter, device and GATT interfaces are kept, so the mirror's size is bounded by
/// what bluetoothd itself exports for them; an object whose last kept interface is removed is
/// forgotten. Mistyped properties from the bus never crash the typed views: a field that does not
/// have the documented type reads as absent.
public struct BlueZObjectTree: Sendable {
    /// path → interface → property → value.
    public private(set) var objects: [DBusObjectPath: [String: [String: DBusValue]]] = [:]
    /// Upper-cased `Device1.Address` → the device objects with it (one per adapter that knows
    /// it), kept with every change, so `devices(address:)` and `devices(_:)` cost a lookup, not a walk of the tree:
    /// the fleet asks it for every device on every policy evaluation.
    private var devicesByAddress: [String: Set<DBusObjectPath>] = [:]
    /// The address each device object is indexed under.
    private var indexedAddress: [DBusObjectPath: String] = [:]

    static let keptInterfaces: Set<String> = [
        BlueZInterfaces.adapter, BlueZInterfaces.device, BlueZInterfaces.gattService,
        BlueZInterfaces.gattCharacteristic, BlueZInterfaces.gattDescriptor,
    ]

    public init() {}

    /// Builds the mirror from a `GetManagedObjects` reply body (`a{oa{sa{sv}}}`).
    public init(managedObjects value: DBusValue) throws(DBusDecodingError) {
        let decoded = try [DBusObjectPath: [String: [String: DBusValue]]](dbusValue: value)
        for (path, interfaces) in decoded { interfacesAdded(path, interfaces) }
    }

    public mutating func interfacesAdded(_ path: DBusObjectPath, _ interfaces: [String: [String: DBusValue]]) {
        for (name, properties) in interfaces where Self.keptInterfaces.contains(name) {
            objects[path, default: [:]][name, default: [:]].merge(properties) { _, new in new }
        }
        if interfaces[BlueZInterfaces.device] != nil { reindexAddress(of: path) }
    }

    public mutating func interfacesRemoved(_ path: DBusObjectPath, _ names: [String]) {
        guard var object = objects[path] else { return }
        for name in names { object[name] = nil }
        objects[path] = object.isEmpty ? nil : object
        if names.contains(BlueZInterfaces.device) { reindexAddress(of: path) }
    }

    /// Files the device object at `path` under its current address (or nowhere, when it has none).
    private mutating func reindexAddress(of path: DBusObjectPath) {
        var address: String?
        if case .string(let text)? = objects[path]?[BlueZInterfaces.device]?["Address"] { address = text.uppercasedIfNeeded }
        let previous = indexedAddress[path]
        guard previous != address else { return }
        if let previous {
            devicesByAddress[previous]?.remove(path)
            if devicesByAddress[previous]?.isEmpty == true { devicesByAddress[previous] = nil }
        }
        indexedAddress[path] = address
        if let address { devicesByAddress[address, default: []].insert(path) }
    }

    /// Applies a `PropertiesChanged`; returns false when the object or interface is not mirrored
    /// (the signal is then ignored rather than creating half an object).
    @discardableResult
    public mutating func propertiesChanged(
        _ path: DBusObjectPath, interface: String, changed: [String: DBusValue], invalidated: [String]
    ) -> Bool {
        guard objects[path]?[interface] != nil else { return false }
        objects[path]?[interface]?.merge(changed) { _, new in new }
        for name in invalidated { objects[path]?[interface]?[name] = nil }
        if interface == BlueZInterfaces.device, changed["Address"] != nil || invalidated.contains("Address") {
            reindexAddress(of: path)
        }
        return true
    }

    // MARK: - Typed views

    public var adapters: [BlueZAdapter] {
        objects.keys.sorted().compactMap { path in
            objects[path]?[BlueZInterfaces.adapter].map { BlueZAdapter(path: path, properties: $0) }
        }
    }

    public var devices: [BlueZDevice] {
        objects.keys.sorted().compactMap { path in
            objects[path]?[BlueZInterfaces.device].map { BlueZDevice(path: path, properties: $0) }
        }
    }

    public func adapter(at path: DBusObjectPath) -> BlueZAdapter? {
        objects[path]?[BlueZInterfaces.adapter].map { BlueZAdapter(path: path, properties: $0) }
    }

    public func device(at path: DBusObjectPath) -> BlueZDevice? {
        objects[path]?[BlueZInterfaces.device].map { BlueZDevice(path: path, properties: $0) }
    }

    /// The device objects with this address (one per adapter that knows it), address compared
    /// without regard to case.
    public func devices(address: String) -> [BlueZDevice] {
        guard let paths = devicesByAddress[address.uppercasedIfNeeded] else { return [] }
        return paths.sorted().compactMap { device(at: $0) }
    }

    /// Every adapter's object for this device (one per adapter that knows it), in path order:
    /// the address index's lookup, then the address type compared.
    public func devices(_ id: DeviceID) -> [BlueZDevice] {
        guard let paths = devicesByAddress[id.address.description] else { return [] }
        return paths.sorted().compactMap { path in device(at: path).flatMap { $0.identity == id ? $0 : nil } }
    }

    /// The device's object on `adapter`; nil when that adapter holds none for it.
    public func device(_ id: DeviceID, on adapter: AdapterID) -> BlueZDevice? {
        devices(id).first { $0.adapterID == adapter }
    }

    /// The GATT characteristics below a device object.
    public func characteristics(of device: DBusObjectPath) -> [BlueZCharacteristic] {
        descendants(of: device, with: BlueZInterfaces.gattCharacteristic).map { BlueZCharacteristic(path: $0, properties: $1) }
    }

    /// The GATT services below a device object.
    public func services(of device: DBusObjectPath) -> [BlueZService] {
        descendants(of: device, with: BlueZInterfaces.gattService).map { BlueZService(path: $0, properties: $1) }
    }

    /// The objects below `device` that have `interface`, in path order, with that interface's
    /// properties. The device's own objects are picked out before sorting: sorting the whole
    /// tree for each device that connects made a fleet's connecting quadratic (perf: a tenth of
    /// the daemon's CPU while 100 devices connected).
    private func descendants(
        of device: DBusObjectPath, with interface: String
    ) -> [(path: DBusObjectPath, properties: [String: DBusValue])] {
        var found: [(path: DBusObjectPath, properties: [String: DBusValue])] = []
        for (path, interfaces) in objects where path != device && path.isDescendant(of: device) {
            if let properties = interfaces[interface] { found.append((path, properties)) }
        }
        return found.sorted { $0.path < $1.path }
    }
}
