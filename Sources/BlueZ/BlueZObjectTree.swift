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
    }

    public mutating func interfacesRemoved(_ path: DBusObjectPath, _ names: [String]) {
        guard var object = objects[path] else { return }
        for name in names { object[name] = nil }
        objects[path] = object.isEmpty ? nil : object
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
        let wanted = address.uppercased()
        return devices.filter { $0.address?.uppercased() == wanted }
    }

    /// The GATT characteristics below a device object.
    public func characteristics(of device: DBusObjectPath) -> [BlueZCharacteristic] {
        objects.keys.sorted().compactMap { path in
            guard path != device, path.isDescendant(of: device),
                let properties = objects[path]?[BlueZInterfaces.gattCharacteristic]
            else { return nil }
            return BlueZCharacteristic(path: path, properties: properties)
        }
    }

    /// The GATT services below a device object.
    public func services(of device: DBusObjectPath) -> [BlueZService] {
        objects.keys.sorted().compactMap { path in
            guard path != device, path.isDescendant(of: device),
                let properties = objects[path]?[BlueZInterfaces.gattService]
            else { return nil }
            return BlueZService(path: path, properties: properties)
        }
    }
}
