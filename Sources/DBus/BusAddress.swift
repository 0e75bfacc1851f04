/// Which bus to connect to.
public enum BusAddress: Sendable, Hashable, CustomStringConvertible {
    /// The system bus: `DBUS_SYSTEM_BUS_ADDRESS` when set, else `unix:path=/run/dbus/system_bus_socket`.
    case system
    /// The session bus from `DBUS_SESSION_BUS_ADDRESS`.
    case session
    /// An explicit server address such as `unix:path=/tmp/bus.sock`.
    case address(String)

    public var description: String {
        switch self {
        case .system: return "system bus"
        case .session: return "session bus"
        case .address(let address): return address
        }
    }
}
