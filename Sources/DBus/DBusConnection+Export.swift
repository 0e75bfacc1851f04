import CDBus

private let propertiesInterface = "org.freedesktop.DBus.Properties"
private let introspectableInterface = "org.freedesktop.DBus.Introspectable"
private let peerInterface = "org.freedesktop.DBus.Peer"
private let objectManagerInterface = "org.freedesktop.DBus.ObjectManager"

extension DBusConnection {
    // MARK: - Exporting

    /// Exports `interfaces` (with initial property values) at `path`, adding to any interfaces
    /// already there. Under an ObjectManager this emits one `InterfacesAdded`, from the manager's
    /// own path as BlueZ and the specification do.
    public func export(_ interfaces: [(DBusInterface, [String: DBusValue])], at path: DBusObjectPath) throws {
        guard isOpen else { throw DBusError(name: DBusError.disconnected, message: "connection is closed") }
        for (interface, values) in interfaces {
            try DBusValidation.checkInterfaceName(interface.name)
            for method in interface.methods { try DBusValidation.checkMemberName(method.name) }
            for (name, value) in values {
                guard let property = interface.property(named: name) else {
                    throw DBusError(name: DBusError.invalidArgs, message: "\(interface.name) has no property \(name)")
                }
                guard value.type == property.type else {
                    throw DBusError(
                        name: DBusError.invalidArgs,
                        message: "property \(interface.name).\(name) is '\(property.type)', not '\(value.type)'")
                }
                try MessageCodec.validate(value, depth: 0)
            }
        }
        var object = objects.objects[path] ?? ObjectRegistry.Object()
        var added: [String] = []
        for (interface, values) in interfaces {
            if object.interfaces[interface.name] == nil { object.interfaceOrder.append(interface.name) }
            object.interfaces[interface.name] = ObjectRegistry.Interface(description: interface, values: values)
            added.append(interface.name)
        }
        objects.objects[path] = object
        if let manager = objects.manager(for: path) {
            try emitSignal(
                path: manager, interface: objectManagerInterface, member: "InterfacesAdded",
                [.objectPath(path), objects.interfacesAndProperties(object, names: added)])
        }
    }

    /// Exports a single interface; see `export(_:at:)`.
    public func export(_ interface: DBusInterface, properties: [String: DBusValue] = [:], at path: DBusObjectPath) throws {
        try export([(interface, properties)], at: path)
    }

    /// Removes interfaces from `path` (all of them when `interfaces` is nil), emitting
    /// `InterfacesRemoved` under an ObjectManager.
    public func unexport(_ path: DBusObjectPath, interfaces: [String]? = nil) throws {
        guard var object = objects.objects[path] else { return }
        let removed = interfaces?.filter { object.interfaces[$0] != nil } ?? object.interfaceOrder
        guard !removed.isEmpty else { return }
        for name in removed { object.interfaces[name] = nil }
        object.interfaceOrder.removeAll { removed.contains($0) }
        objects.objects[path] = object.interfaces.isEmpty ? nil : object
        if let manager = objects.manager(for: path), isOpen {
            try emitSignal(
                path: manager, interface: objectManagerInterface, member: "InterfacesRemoved",
                [.objectPath(path), .stringArray(removed)])
        }
    }

    /// Serves `org.freedesktop.DBus.ObjectManager` at `path` for every object below it.
    public func addObjectManager(at path: DBusObjectPath) {
        objects.managers.insert(path)
    }

    /// True when something is exported at `path`.
    public func isExported(_ path: DBusObjectPath) -> Bool { objects.objects[path] != nil }

    /// The current value of an exported property.
    public func property(_ name: String, of interface: String, at path: DBusObjectPath) -> DBusValue? {
        objects.objects[path]?.interfaces[interface]?.values[name]
    }

    /// Updates exported properties and emits one `PropertiesChanged` for those that changed and
    /// announce changes. Unchanged values emit nothing, unless `announcingUnchanged` (as
    /// bluetoothd announces every notification and every value read, repeated or not).
    public func setProperties(
        _ values: [String: DBusValue], of interface: String, at path: DBusObjectPath, announcingUnchanged: Bool = false
    ) throws {
        guard var exported = objects.objects[path]?.interfaces[interface] else {
            throw DBusError(name: DBusError.unknownObject, message: "\(interface) is not exported at \(path)")
        }
        var changed: [String: DBusValue] = [:]
        for (name, value) in values {
            guard let property = exported.description.property(named: name) else {
                throw DBusError(name: DBusError.unknownProperty, message: "\(interface) has no property \(name)")
            }
            guard value.type == property.type else {
                throw DBusError(
                    name: DBusError.invalidArgs, message: "property \(interface).\(name) is '\(property.type)', not '\(value.type)'")
            }
            try MessageCodec.validate(value, depth: 0)
            if exported.values[name] != value || announcingUnchanged {
                exported.values[name] = value
                if property.emitsChange { changed[name] = value }
            }
        }
        objects.objects[path]?.interfaces[interface] = exported
        if !changed.isEmpty {
            try emitSignal(
                path: path, interface: propertiesInterface, member: "PropertiesChanged",
                [.string(interface), .stringVariantMap(changed), .stringArray([])])
        }
    }

    /// Updates one exported property; see `setProperties(_:of:at:)`.
    public func setProperty(_ name: String, to value: DBusValue, of interface: String, at path: DBusObjectPath) throws {
        try setProperties([name: value], of: interface, at: path)
    }

    /// Removes a property's value (it then reads as absent, like BlueZ's optional properties)
    /// and announces it in `invalidated_properties`.
    public func removeProperty(_ name: String, of interface: String, at path: DBusObjectPath) throws {
        guard objects.objects[path]?.interfaces[interface]?.values.removeValue(forKey: name) != nil else { return }
        try emitSignal(
            path: path, interface: propertiesInterface, member: "PropertiesChanged",
            [.string(interface), .stringVariantMap([:]), .stringArray([name])])
    }

    // MARK: - Incoming calls

    func handleMethodCall(_ call: DBusMessage) {
        guard let path = call.path, let member = call.member else { return }
        switch call.interface {
        case peerInterface?:
            handlePeer(call, member: member)
        case introspectableInterface? where member == "Introspect":
            reply(to: call, [.string(Introspection.xml(for: path, registry: objects))])
        case propertiesInterface?:
            handleProperties(call, path: path, member: member)
        case objectManagerInterface? where objects.managers.contains(path) && member == "GetManagedObjects":
            reply(to: call, [objects.managedObjects(under: path)])
        default:
            handleExportedMethod(call, path: path, member: member)
        }
    }

    private func handleExportedMethod(_ call: DBusMessage, path: DBusObjectPath, member: String) {
        guard let object = objects.objects[path] else {
            return replyError(to: call, DBusError(name: DBusError.unknownObject, message: "No such object path '\(path)'"))
        }
        let method: DBusMethod?
        if let interfaceName = call.interface {
            guard let interface = object.interfaces[interfaceName] else {
                return replyError(
                    to: call, DBusError(name: DBusError.unknownInterface, message: "No such interface '\(interfaceName)' at '\(path)'"))
            }
            method = interface.description.method(named: member)
        } else {
            method = object.interfaceOrder.lazy.compactMap { object.interfaces[$0]?.description.method(named: member) }.first
        }
        guard let method else {
            return replyError(to: call, DBusError(name: DBusError.unknownMethod, message: "No such method '\(member)'"))
        }
        guard call.signature == method.inputSignature else {
            return replyError(
                to: call,
                DBusError(
                    name: DBusError.invalidArgs,
                    message: "Invalid arguments for \(member): expected '\(method.inputSignature)', got '\(call.signature)'"))
        }
        let context = DBusMethodCall(message: call)
        switch method.handler {
        case .sync(let handler):
            do {
                try replyChecked(to: call, try handler(context), method: method)
            } catch {
                replyError(to: call, error)
            }
        case .async(let handler):
            // The task is isolated to this actor; only the handler itself runs elsewhere.
            Task {
                do {
                    let body = try await handler(context)
                    try self.replyChecked(to: call, body, method: method)
                } catch {
                    self.replyError(to: call, error)
                }
            }
        }
    }

    private func replyChecked(to call: DBusMessage, _ body: [DBusValue], method: DBusMethod) throws {
        let signature = body.map(\.type.signature).joined()
        guard signature == method.outputSignature else {
            throw DBusError(
                name: DBusError.failed,
                message: "\(method.name) produced '\(signature)' instead of '\(method.outputSignature)'")
        }
        reply(to: call, body)
    }

    func reply(to call: DBusMessage, _ body: [DBusValue]) {
        guard !call.noReplyExpected else { return }
        var message = DBusMessage(kind: .methodReturn, body: body)
        message.replySerial = call.serial
        message.destination = call.sender
        do {
            try send(message)
        } catch {
            replyError(to: call, error)
        }
    }

    func replyError(to call: DBusMessage, _ error: any Error) {
        guard !call.noReplyExpected else { return }
        let dbusError: DBusError
        switch error {
        case let error as DBusError: dbusError = error
        case let error as DBusValidationError: dbusError = DBusError(name: DBusError.invalidArgs, message: error.description)
        case let error as DBusDecodingError: dbusError = DBusError(name: DBusError.invalidArgs, message: error.description)
        default: dbusError = DBusError(name: DBusError.failed, message: "\(error)")
        }
        var message = DBusMessage(kind: .error, body: [.string(dbusError.message)])
        message.errorName = dbusError.name
        message.replySerial = call.serial
        message.destination = call.sender
        do {
            try send(message)
        } catch {
            // An invalid error name from an exporter: fall back to a generic one rather than
            // leaving the caller waiting.
            message.errorName = DBusError.failed
            message.body = [.string("\(dbusError.name): \(dbusError.message)")]
            try? send(message)
        }
    }

    // MARK: - Standard interfaces

    private func handlePeer(_ call: DBusMessage, member: String) {
        switch member {
        case "Ping":
            reply(to: call, [])
        case "GetMachineId":
            guard let id = dbus_try_get_local_machine_id(nil) else {
                return replyError(to: call, DBusError(name: DBusError.failed, message: "no machine id"))
            }
            let text = String(cString: id)
            dbus_free(id)
            reply(to: call, [.string(text)])
        default:
            replyError(to: call, DBusError(name: DBusError.unknownMethod, message: "No such method '\(member)'"))
        }
    }

    private func handleProperties(_ call: DBusMessage, path: DBusObjectPath, member: String) {
        do {
            switch member {
            case "Get":
                try call.body.expectSignature("ss")
                let interfaceName = try call.body.decode(String.self, at: 0)
                let name = try call.body.decode(String.self, at: 1)
                let (interface, property) = try lookUpProperty(path: path, interface: interfaceName, name: name)
                guard property.access != .write, let value = interface.values[name] else {
                    throw DBusError(name: DBusError.accessDenied, message: "Property '\(name)' is not readable")
                }
                reply(to: call, [.variant(value)])
            case "GetAll":
                try call.body.expectSignature("s")
                let interfaceName = try call.body.decode(String.self, at: 0)
                guard let interface = objects.objects[path]?.interfaces[interfaceName] else {
                    // The specification allows an empty answer for interfaces without properties;
                    // BlueZ answers InvalidArgs for unknown ones.
                    throw DBusError(name: DBusError.invalidArgs, message: "No such interface '\(interfaceName)'")
                }
                reply(to: call, [ObjectRegistry.propertyMap(interface)])
            case "Set":
                try call.body.expectSignature("ssv")
                let interfaceName = try call.body.decode(String.self, at: 0)
                let name = try call.body.decode(String.self, at: 1)
                let value = try call.body.decode(DBusValue.self, at: 2)
                let (interface, property) = try lookUpProperty(path: path, interface: interfaceName, name: name)
                guard property.access != .read else {
                    throw DBusError(name: DBusError.propertyReadOnly, message: "Property '\(name)' is read-only")
                }
                guard value.type == property.type else {
                    throw DBusError(
                        name: DBusError.invalidArgs, message: "Property '\(name)' is '\(property.type)', not '\(value.type)'")
                }
                try interface.description.willSet?(path, name, value)
                try setProperties([name: value], of: interfaceName, at: path)
                reply(to: call, [])
            default:
                throw DBusError(name: DBusError.unknownMethod, message: "No such method '\(member)'")
            }
        } catch {
            replyError(to: call, error)
        }
    }

    private func lookUpProperty(
        path: DBusObjectPath, interface name: String, name property: String
    ) throws -> (ObjectRegistry.Interface, DBusProperty) {
        guard let object = objects.objects[path] else {
            throw DBusError(name: DBusError.unknownObject, message: "No such object path '\(path)'")
        }
        guard let interface = object.interfaces[name] else {
            throw DBusError(name: DBusError.invalidArgs, message: "No such interface '\(name)'")
        }
        guard let description = interface.description.property(named: property) else {
            throw DBusError(name: DBusError.invalidArgs, message: "No such property '\(property)'")
        }
        return (interface, description)
    }
}
