import DBus

/// The client side of `org.wearfleet.Daemon1`, as `wearfleetctl` uses it. Every failure is a
/// `ControlClientError` (message plus exit code).
public struct ControlClient: Sendable {
    /// How long a call may take: the daemon answers from memory, so a slow answer means trouble.
    public static let callTimeout: Duration = .seconds(10)

    public let connection: DBusConnection
    /// The bus, for messages ("the system bus", or the address given).
    public let bus: String

    /// How messages name a bus: "the system bus", or the address given.
    public static func displayName(of address: BusAddress) -> String {
        switch address {
        case .system: return "the system bus"
        case .session: return "the session bus"
        case .address(let text): return text
        }
    }

    public init(connection: DBusConnection, bus: String) {
        self.connection = connection
        self.bus = bus
    }

    /// Connects to `address` (`environment` supplies `DBUS_SYSTEM_BUS_ADDRESS`).
    public static func connect(to address: BusAddress, environment: [String: String]? = nil) async throws -> ControlClient {
        let bus = displayName(of: address)
        do {
            let connection = try await DBusConnection.connect(to: address, threadName: "dbus-ctl", environment: environment)
            return ControlClient(connection: connection, bus: bus)
        } catch let error as DBusError {
            let detail = error.message.isEmpty ? "cannot connect to \(bus): \(error.name)" : error.message
            throw ControlClientError.busUnavailable(bus: bus, detail: detail)
        } catch {
            throw ControlClientError.busUnavailable(bus: bus, detail: "\(error)")
        }
    }

    /// `GetStatus` and `ListDevices`: the fleet with every device.
    public func status() async throws -> ControlStatus {
        do {
            let statusReply = try await call("GetStatus")
            try statusReply.expectSignature("a{sv}")
            var status = try ControlStatus(properties: try statusReply.decode([String: DBusValue].self, at: 0))
            let devicesReply = try await call("ListDevices")
            try devicesReply.expectSignature("aa{sv}")
            status.devices = try devicesReply.decode([[String: DBusValue]].self, at: 0).map(ControlDevice.init(properties:))
            return status
        } catch {
            throw ControlClientError(error, bus: bus)
        }
    }

    /// `GetDevice(address)`.
    public func device(_ address: String) async throws -> ControlDevice {
        do {
            let reply = try await call("GetDevice", [.string(address)])
            try reply.expectSignature("a{sv}")
            return try ControlDevice(properties: try reply.decode([String: DBusValue].self, at: 0))
        } catch {
            throw ControlClientError(error, bus: bus, address: address)
        }
    }

    public func close() async {
        await connection.close()
    }

    private func call(_ member: String, _ arguments: [DBusValue] = []) async throws -> [DBusValue] {
        try await connection.call(
            destination: WearfleetControl.busName, path: WearfleetControl.objectPath,
            interface: WearfleetControl.interfaceName, member: member, arguments, timeout: Self.callTimeout)
    }
}
