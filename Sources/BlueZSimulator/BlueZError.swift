import BluetoothVocabulary
import DBus
import Foundation

/// The error replies bluetoothd sends, with BlueZ's exact names (from `BlueZErrorKind`, the table
/// clients parse them with) and texts (`src/error.c` and the `doc/org.bluez.*.rst` pages), so
/// clients that classify errors see what a gateway would send.
public enum BlueZError {
    private static func reply(_ kind: BlueZErrorKind, _ text: String) -> DBusError {
        DBusError(name: kind.dbusName, message: text)
    }

    public static func failed(_ text: String) -> DBusError { reply(.failed, text) }
    public static func inProgress() -> DBusError { reply(.inProgress, "In Progress") }
    /// What BlueZ answers to a second StartDiscovery from the same client (`btd_error_busy`).
    public static func busy() -> DBusError { reply(.inProgress, "Operation already in progress") }
    public static func notReady() -> DBusError { reply(.notReady, "Resource Not Ready") }
    public static func notConnected() -> DBusError { reply(.notConnected, "Not Connected") }
    public static func alreadyConnected() -> DBusError { reply(.alreadyConnected, "Already Connected") }
    public static func alreadyExists() -> DBusError { reply(.alreadyExists, "Already Exists") }
    public static func doesNotExist() -> DBusError { reply(.doesNotExist, "Does Not Exist") }
    public static func notPermitted(_ text: String) -> DBusError { reply(.notPermitted, text) }
    public static func notAuthorized() -> DBusError { reply(.notAuthorized, "Operation Not Authorized") }
    public static func notSupported() -> DBusError { reply(.notSupported, "Operation is not supported") }
    public static func invalidArguments() -> DBusError { reply(.invalidArguments, "Invalid arguments in method call") }
    public static func invalidValueLength() -> DBusError { reply(.invalidValueLength, "Invalid Length") }
    public static func invalidOffset() -> DBusError { reply(.invalidOffset, "Invalid offset") }
    // `Pair`'s answers (src/device.c `new_authentication_return`).
    public static func authenticationFailed() -> DBusError { reply(.authenticationFailed, "Authentication Failed") }
    public static func authenticationTimeout() -> DBusError { reply(.authenticationTimeout, "Authentication Timeout") }
    public static func authenticationCanceled() -> DBusError { reply(.authenticationCanceled, "Authentication Canceled") }
    /// What bluetoothd 5.66 answers when the device refused a GATT read or write with ATT error
    /// `code` (`create_gatt_dbus_error` in `src/gatt-client.c`): a few codes have errors of their
    /// own, the rest are `Failed` with the code in hex.
    public static func attError(_ code: UInt8) -> DBusError {
        switch code {
        case 0x02: notPermitted("Read not permitted")
        case 0x03: notPermitted("Write not permitted")
        // Insufficient authentication, encryption, encryption key size.
        case 0x05, 0x0f, 0x0c: notPermitted("Not paired")
        case 0x07: reply(.invalidArguments, "Invalid offset")
        case 0x0d: reply(.invalidArguments, "Invalid Length")
        case 0x08: notAuthorized()
        case 0x06: notSupported()
        case 0: failed("Operation failed")
        default: failed(String(format: "Operation failed with ATT error: 0x%02x", code))
        }
    }

    // MARK: - Connection failure texts (kernel errors as bluetoothd words them)

    public static let abortByLocal = "le-connection-abort-by-local"
    public static let abortByRemote = "le-connection-abort-by-remote"
    public static let connectionTimeout = "le-connection-timeout"
    public static let concurrentConnectionLimit = "le-connection-concurrent-connection-limit"
    public static let canceled = "br-connection-canceled"
}
