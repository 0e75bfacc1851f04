import DBus

/// An error from bluetoothd (or from the bus on its behalf), with a kind to branch on and the
/// raw name and text kept for logs and for FleetCore's failure classification.
public struct BlueZError: Error, Hashable, Sendable, CustomStringConvertible {
    /// What went wrong, as far as a caller needs to branch. Unrecognised names are `.other`.
    public enum Kind: String, Sendable, CaseIterable {
        case failed, inProgress, notReady, alreadyConnected, notConnected, notPermitted, notAuthorized
        case notSupported, doesNotExist, invalidArguments, invalidValueLength, invalidOffset
        case authenticationFailed, connectionAttemptFailed
        /// The object is gone (device removed, bluetoothd restarted): `UnknownObject`.
        case unknownObject
        /// bluetoothd is not on the bus: `ServiceUnknown` / `NameHasNoOwner`.
        case serviceUnavailable
        /// No reply in time, or the bus connection was lost.
        case timeout, disconnected
        case other
    }

    public let kind: Kind
    /// The D-Bus error name exactly as received (`org.bluez.Error.Failed`).
    public let name: String
    /// The error text exactly as received (`le-connection-abort-by-local`).
    public let message: String

    public init(name: String, message: String) {
        self.name = name
        self.message = message
        self.kind = Self.table[name] ?? .other
    }

    public init(_ error: DBusError) {
        self.init(name: error.name, message: error.message)
    }

    public var description: String { message.isEmpty ? name : "\(name): \(message)" }

    /// One table, exact names only: no substring matching scattered through the code.
    private static let table: [String: Kind] = [
        "org.bluez.Error.Failed": .failed,
        "org.bluez.Error.InProgress": .inProgress,
        "org.bluez.Error.NotReady": .notReady,
        "org.bluez.Error.AlreadyConnected": .alreadyConnected,
        "org.bluez.Error.NotConnected": .notConnected,
        "org.bluez.Error.NotPermitted": .notPermitted,
        "org.bluez.Error.NotAuthorized": .notAuthorized,
        "org.bluez.Error.NotSupported": .notSupported,
        "org.bluez.Error.DoesNotExist": .doesNotExist,
        "org.bluez.Error.InvalidArguments": .invalidArguments,
        "org.bluez.Error.InvalidValueLength": .invalidValueLength,
        "org.bluez.Error.InvalidOffset": .invalidOffset,
        "org.bluez.Error.AuthenticationFailed": .authenticationFailed,
        "org.bluez.Error.ConnectionAttemptFailed": .connectionAttemptFailed,
        DBusError.unknownObject: .unknownObject,
        DBusError.unknownMethod: .unknownObject,
        DBusError.serviceUnknown: .serviceUnavailable,
        DBusError.nameHasNoOwner: .serviceUnavailable,
        DBusError.noReply: .timeout,
        DBusError.timeout: .timeout,
        DBusError.disconnected: .disconnected,
    ]
}
