import DBus

/// The error replies bluetoothd sends, with BlueZ's exact names and texts (`src/error.c` and the
/// `doc/org.bluez.*.rst` pages), so clients that classify errors see what a gateway would send.
public enum BlueZError {
    public static let prefix = "org.bluez.Error."

    public static func failed(_ text: String) -> DBusError { DBusError(name: prefix + "Failed", message: text) }
    public static func inProgress() -> DBusError { DBusError(name: prefix + "InProgress", message: "In Progress") }
    /// What BlueZ answers to a second StartDiscovery from the same client (`btd_error_busy`).
    public static func busy() -> DBusError { DBusError(name: prefix + "InProgress", message: "Operation already in progress") }
    public static func notReady() -> DBusError { DBusError(name: prefix + "NotReady", message: "Resource Not Ready") }
    public static func notConnected() -> DBusError { DBusError(name: prefix + "NotConnected", message: "Not Connected") }
    public static func alreadyConnected() -> DBusError {
        DBusError(name: prefix + "AlreadyConnected", message: "Already Connected")
    }
    public static func alreadyExists() -> DBusError { DBusError(name: prefix + "AlreadyExists", message: "Already Exists") }
    public static func doesNotExist() -> DBusError { DBusError(name: prefix + "DoesNotExist", message: "Does Not Exist") }
    public static func notPermitted(_ text: String) -> DBusError { DBusError(name: prefix + "NotPermitted", message: text) }
    public static func notAuthorized() -> DBusError {
        DBusError(name: prefix + "NotAuthorized", message: "Operation Not Authorized")
    }
    public static func notSupported() -> DBusError {
        DBusError(name: prefix + "NotSupported", message: "Operation is not supported")
    }
    public static func invalidArguments() -> DBusError {
        DBusError(name: prefix + "InvalidArguments", message: "Invalid arguments in method call")
    }
    public static func invalidValueLength() -> DBusError {
        DBusError(name: prefix + "InvalidValueLength", message: "Invalid Length")
    }
    public static func invalidOffset() -> DBusError { DBusError(name: prefix + "InvalidOffset", message: "Invalid offset") }
    // MARK: - Connection failure texts (kernel errors as bluetoothd words them)

    public static let abortByLocal = "le-connection-abort-by-local"
    public static let abortByRemote = "le-connection-abort-by-remote"
    public static let connectionTimeout = "le-connection-timeout"
    public static let concurrentConnectionLimit = "le-connection-concurrent-connection-limit"
    public static let canceled = "br-connection-canceled"
}
