import DBus

/// Why `wearfleetctl` could not show what was asked, each with the message and exit code it
/// prints and returns.
public enum ControlClientError: Error, Hashable, Sendable, CustomStringConvertible {
    /// The bus itself could not be reached; `detail` is the D-Bus library's message, which
    /// names the bus, its address and the reason.
    case busUnavailable(bus: String, detail: String)
    /// Nobody owns `org.wearfleet.Daemon` on the bus.
    case notRunning(bus: String)
    /// The bus policy refused the call; `detail` is the bus's explanation (kept for callers, not
    /// printed: it is long, and dbus-daemon logs it too).
    case accessDenied(detail: String)
    /// `GetDevice` for an address the fleet does not know.
    case unknownDevice(String)
    /// `GetDevice` for something that is not an address.
    case invalidAddress(String)
    /// A command (`pin`, `write`, …) by a caller who is neither root nor in the admin group.
    case commandDenied(detail: String)
    /// A command's argument the daemon cannot take (a UUID, an option, a value too long): `name`
    /// is the `org.wearfleet.Error.*` it answered, `message` its explanation.
    case invalidArgument(name: String, message: String)
    /// The daemon refused the command or it failed (not connected, pinned by the file, queue
    /// full, bluetoothd's error, …): nothing changed. `name` and `message` as answered.
    case refused(name: String, message: String)
    /// `WatchValues` refused the filter (an address or UUID it cannot read); the daemon's message.
    case invalidFilter(String)
    /// The daemon did not answer in time.
    case noAnswer(after: Duration)
    /// The bus connection went away during the call.
    case connectionLost(bus: String)
    /// Something owns the name but does not serve `org.wearfleet.Daemon1`, or replied in a
    /// shape this version does not understand.
    case incompatible(detail: String)
    /// Any other error reply.
    case failed(DBusError)

    /// Exit codes, as documented in README ("wearfleetctl").
    public enum ExitCode {
        public static let success: Int32 = 0
        /// The daemon is not running, not reachable, or answered with an error.
        public static let failure: Int32 = 1
        /// Bad command line (ArgumentParser's own code, 64, is mapped to this).
        public static let usage: Int32 = 2
        /// No such device (as `systemctl status` returns 4 for "no such unit").
        public static let unknownDevice: Int32 = 4
        /// The bus policy refused the call (EX_NOPERM from sysexits.h).
        public static let permissionDenied: Int32 = 77
    }

    public var exitCode: Int32 {
        switch self {
        case .unknownDevice: return ExitCode.unknownDevice
        case .invalidAddress, .invalidArgument, .invalidFilter: return ExitCode.usage
        case .accessDenied, .commandDenied: return ExitCode.permissionDenied
        case .busUnavailable, .notRunning, .noAnswer, .connectionLost, .incompatible, .refused, .failed: return ExitCode.failure
        }
    }

    public var description: String {
        switch self {
        case .busUnavailable(let bus, let detail):
            return detail.isEmpty ? "cannot connect to \(bus)" : detail
        case .notRunning(let bus):
            return "wearfleetd is not running on \(bus) (nothing owns \(WearfleetControl.busName))"
        case .accessDenied:
            return "permission denied: only root and members of the 'wearfleet' group may query wearfleetd "
                + "(add a user with 'usermod -aG wearfleet USER', then log in again)"
        case .commandDenied:
            return "permission denied: only root and members of the '\(WearfleetControl.adminGroup)' group may change the fleet "
                + "(add a user with 'usermod -aG \(WearfleetControl.adminGroup) USER', then log in again)"
        case .invalidArgument(_, let message):
            return message
        case .refused(let name, let message):
            return "refused (\(name.split(separator: ".").last ?? "")): \(message)"
        case .unknownDevice(let address):
            return "no such device: \(address) is not in the fleet"
        case .invalidAddress(let text):
            return "invalid address '\(text)': expected AA:BB:CC:DD:EE:FF"
        case .invalidFilter(let message):
            return "invalid watch filter: \(message)"
        case .noAnswer(let after):
            return "wearfleetd did not answer within \(after)"
        case .connectionLost(let bus):
            return "lost the connection to \(bus)"
        case .incompatible(let detail):
            return "unexpected answer from \(WearfleetControl.busName): \(detail)"
        case .failed(let error):
            return "wearfleetd answered with an error: \(error)"
        }
    }

    /// Classifies an error from a control call. `bus` names the bus for messages; `address` is
    /// the device asked for, if any; `command` says the call was one that changes the fleet.
    public init(_ error: any Error, bus: String, address: String? = nil, command: Bool = false) {
        if let error = error as? ControlClientError {
            self = error
            return
        }
        if let error = error as? ControlProtocolError {
            self = .incompatible(detail: error.description)
            return
        }
        if let error = error as? DBusDecodingError {
            self = .incompatible(detail: error.description)
            return
        }
        guard let error = error as? DBusError else {
            self = .failed(DBusError(name: DBusError.failed, message: "\(error)"))
            return
        }
        switch error.name {
        case DBusError.serviceUnknown, DBusError.nameHasNoOwner:
            self = .notRunning(bus: bus)
        case DBusError.accessDenied:
            self = command ? .commandDenied(detail: error.message) : .accessDenied(detail: error.message)
        case WearfleetControl.ErrorName.unknownDevice:
            self = .unknownDevice(address ?? error.message)
        case WearfleetControl.ErrorName.invalidAddress:
            self = .invalidAddress(address ?? error.message)
        case WearfleetControl.ErrorName.invalidUUID, WearfleetControl.ErrorName.invalidOption, WearfleetControl.ErrorName.tooLarge:
            self = .invalidArgument(name: error.name, message: error.message)
        case WearfleetControl.ErrorName.invalidFilter:
            self = .invalidFilter(error.message)
        case let name where name.hasPrefix("org.wearfleet.Error."):
            self = .refused(name: name, message: error.message)
        case DBusError.noReply, DBusError.timeout:
            // The timeout this call was made with: a command's, or a query's.
            self = .noAnswer(after: command ? ControlClient.commandTimeout : ControlClient.callTimeout)
        case DBusError.disconnected:
            self = .connectionLost(bus: bus)
        case DBusError.unknownMethod, DBusError.unknownObject, DBusError.unknownInterface, DBusError.invalidArgs:
            self = .incompatible(detail: error.description)
        default:
            self = .failed(error)
        }
    }
}
