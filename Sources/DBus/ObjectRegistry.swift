/// The objects a connection exports, with their property values. Owned by the connection actor.
struct ObjectRegistry {
    struct Interface {
        var description: DBusInterface
        var values: [String: DBusValue]
    }

    struct Object {
        /// In the order they were added, so introspection and ObjectManager output are stable.
        var interfaceOrder: [String] = []
        var interfaces: [String: Interface] = [:]
    }

    var objects: [DBusObjectPath: Object] = [:]
    var managers: Set<DBusObjectPath> = []

    mutating func removeAll() {
        objects.removeAll()
        managers.removeAll()
    }

    /// The ObjectManager responsible for `path`: the nearest manager strictly above it, or at it
    /// (BlueZ's root manager at `/` also reports objects below it).
    func manager(for path: DBusObjectPath) -> DBusObjectPath? {
        var candidate: DBusObjectPath? = path.parent
        while let current = candidate {
            if managers.contains(current) { return current }
            candidate = current.parent
        }
        return nil
    }

    /// The direct child element names below `path`, from exported objects and managers.
    func childNames(of path: DBusObjectPath) -> [String] {
        var names = Set<String>()
        let prefix = path.rawValue == "/" ? "/" : path.rawValue + "/"
        for candidate in Array(objects.keys) + Array(managers) where candidate.rawValue.hasPrefix(prefix) {
            let rest = candidate.rawValue.dropFirst(prefix.count)
            if let element = rest.split(separator: "/").first { names.insert(String(element)) }
        }
        return names.sorted()
    }

    /// Managed objects below `manager` as ObjectManager returns them: `a{oa{sa{sv}}}`.
    func managedObjects(under manager: DBusObjectPath) -> DBusValue {
        let entries = objects.keys.sorted().filter { $0 != manager && $0.isDescendant(of: manager) }.compactMap {
            path -> DBusDictEntry? in
            guard let object = objects[path] else { return nil }
            return DBusDictEntry(key: .objectPath(path), value: interfacesAndProperties(object, names: object.interfaceOrder))
        }
        return .dictionary(key: .objectPath, value: Self.interfacesType, entries)
    }

    /// `a{sa{sv}}` for the named interfaces of an object, plus the standard ones BlueZ lists.
    func interfacesAndProperties(_ object: Object, names: [String]) -> DBusValue {
        var entries: [DBusDictEntry] = []
        for name in names {
            guard let interface = object.interfaces[name] else { continue }
            entries.append(DBusDictEntry(key: .string(name), value: Self.propertyMap(interface)))
        }
        return .dictionary(key: .string, value: .dictionary(key: .string, value: .variant), entries)
    }

    static func propertyMap(_ interface: Interface) -> DBusValue {
        var readable: [String: DBusValue] = [:]
        for property in interface.description.properties where property.access != .write {
            if let value = interface.values[property.name] { readable[property.name] = value }
        }
        return .stringVariantMap(readable)
    }

    static let interfacesType: DBusType = .dictionary(key: .string, value: .dictionary(key: .string, value: .variant))
}
