/// Which bus to connect to.
public enum BusAddress: Sendable, Hashable, CustomStringConvertible {
    /// The system bus: `DBUS_SYSTEM_BUS_ADDRESS` when set, else `unix:path=/run/dbus/system_bus_socket`.
    case system
    /// The session bus from `DBUS_SESSION_BUS_ADDRESS`.
    case session
    /// An explicit server address such as `unix:path=/tmp/bus.sock`.
    case address(String)

    /// The server address to connect to, read from `environment` the way libdbus does:
    /// `DBUS_SYSTEM_BUS_ADDRESS` (default `unix:path=/run/dbus/system_bus_socket`) or
    /// `DBUS_SESSION_BUS_ADDRESS` (required: no autolaunch).
    public func resolved(environment: [String: String]) throws(DBusError) -> String {
        switch self {
        case .system:
            if let address = environment["DBUS_SYSTEM_BUS_ADDRESS"], !address.isEmpty { return address }
            return "unix:path=/run/dbus/system_bus_socket"
        case .session:
            guard let address = environment["DBUS_SESSION_BUS_ADDRESS"], !address.isEmpty else {
                throw DBusError(name: DBusError.failed, message: "DBUS_SESSION_BUS_ADDRESS is not set")
            }
            return address
        case .address(let address):
            return address
        }
    }

    public var description: String {
        switch self {
        case .system: return "system bus"
        case .session: return "session bus"
        case .address(let address): return address
        }
    }
}
