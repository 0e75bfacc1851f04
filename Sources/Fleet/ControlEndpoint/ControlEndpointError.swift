import DBus
import FleetControl

/// Why the control interface could not be put on the bus. The daemon logs it and runs on
/// without the interface (`ControlEndpoint.startOrLog`).
public enum ControlEndpointError: Error, CustomStringConvertible {
    /// The bus could not be reached.
    case cannotConnect(bus: String, DBusError)
    /// Another connection owns `org.wearfleet.Daemon` (another wearfleetd?).
    case nameTaken(owner: String?)
    /// The bus policy does not let this user own the name.
    case notPermitted(DBusError)
    /// Exporting or `RequestName` failed otherwise.
    case failed(any Error)

    public var description: String {
        switch self {
        case .cannotConnect(let bus, let error):
            return "cannot connect to \(bus): \(error)"
        case .nameTaken(let owner):
            return "\(WearfleetControl.busName) is already owned by \(owner ?? "another connection") "
                + "(is another wearfleetd running?)"
        case .notPermitted(let error):
            return "the bus policy does not let this user own \(WearfleetControl.busName) (\(error.message)); "
                + "install systemd/org.wearfleet.Daemon.conf into /usr/share/dbus-1/system.d and run the daemon "
                + "as user wearfleet or root"
        case .failed(let error):
            return "cannot export the control interface: \(error)"
        }
    }
}
