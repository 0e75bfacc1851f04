import DBus

// The commands of `org.wearfleet.Daemon1`, as `wearfleetctl pin|unpin|disconnect|reconnect|read|
// write` calls them. Each answers once the daemon knows the outcome; a refusal is a
// `ControlClientError` naming why (and its exit code).

/// `Pin`'s options, as `wearfleetctl pin` takes them.
public struct ControlPinOptions: Sendable, Hashable {
    public var addressType: String?
    public var className: String?
    public var priority: Int32?
    public var name: String?

    public init(addressType: String? = nil, className: String? = nil, priority: Int32? = nil, name: String? = nil) {
        self.addressType = addressType
        self.className = className
        self.priority = priority
        self.name = name
    }

    /// The `a{sv}` the method takes: only what was given.
    public var properties: [String: DBusValue] {
        var map: [String: DBusValue] = [:]
        if let addressType { map["address_type"] = .string(addressType) }
        if let className { map["class"] = .string(className) }
        if let priority { map["priority"] = .int32(priority) }
        if let name { map["name"] = .string(name) }
        return map
    }
}

extension ControlClient {
    /// A command's call timeout: wearfleetd answers a `Write` within 24 s (its queue wait, the
    /// write and a margin: `FleetOrchestrator.writeAnswerBudget`), every other command sooner.
    public static let commandTimeout: Duration = .seconds(30)

    public func pin(_ address: String, options: ControlPinOptions) async throws {
        _ = try await command("Pin", address: address, [.string(address), .stringVariantMap(options.properties)])
    }

    public func unpin(_ address: String) async throws {
        _ = try await command("Unpin", address: address, [.string(address)])
    }

    public func disconnect(_ address: String) async throws {
        _ = try await command("Disconnect", address: address, [.string(address)])
    }

    public func reconnect(_ address: String) async throws {
        _ = try await command("Reconnect", address: address, [.string(address)])
    }

    /// `Subscribe(address, uuid)`: notifications of the characteristic from now on.
    public func subscribe(_ address: String, uuid: String) async throws {
        _ = try await command("Subscribe", address: address, [.string(address), .string(uuid)])
    }

    /// `Unsubscribe(address, uuid)`: no more notifications of the characteristic.
    public func unsubscribe(_ address: String, uuid: String) async throws {
        _ = try await command("Unsubscribe", address: address, [.string(address), .string(uuid)])
    }

    /// `Read(address, uuid)`: the characteristic's value as the device answered it.
    public func read(_ address: String, uuid: String) async throws -> [UInt8] {
        let reply = try await command("Read", address: address, [.string(address), .string(uuid)])
        do {
            try reply.expectSignature("ay")
            return try reply.decode([UInt8].self, at: 0)
        } catch {
            throw ControlClientError(error, bus: bus, address: address, command: true)
        }
    }

    /// `Write(address, uuid, value, options)`: `acknowledged` or `sent`. `replace`: the value may
    /// replace a still-queued `replace` write to the characteristic (the class's coalescing window).
    public func write(
        _ address: String, uuid: String, value: [UInt8], withoutResponse: Bool, qos: String?, replace: Bool = false
    ) async throws -> String {
        var options: [String: DBusValue] = ["without_response": .boolean(withoutResponse)]
        if let qos { options["qos"] = .string(qos) }
        if replace { options["replace"] = .boolean(true) }
        let reply = try await command(
            "Write", address: address, [.string(address), .string(uuid), .bytes(value), .stringVariantMap(options)])
        do {
            try reply.expectSignature("s")
            return try reply.decode(String.self, at: 0)
        } catch {
            throw ControlClientError(error, bus: bus, address: address, command: true)
        }
    }

    private func command(_ member: String, address: String, _ arguments: [DBusValue]) async throws -> [DBusValue] {
        do {
            return try await connection.call(
                destination: WearfleetControl.busName, path: WearfleetControl.objectPath,
                interface: WearfleetControl.interfaceName, member: member, arguments, timeout: Self.commandTimeout)
        } catch {
            throw ControlClientError(error, bus: bus, address: address, command: true)
        }
    }
}
