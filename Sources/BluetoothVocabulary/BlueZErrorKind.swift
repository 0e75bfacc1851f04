// BlueZ reports a failure as a D-Bus error name (or, for a lost link, a `Device1.Disconnected`
// reason name) plus free text. This is the one table from those names to something a caller can
// branch on: the BlueZ client's errors carry it, and FleetCore's `BlueZErrorClassifier` maps it to
// a failure class without ever comparing names again.

/// What a BlueZ failure means, parsed once from its D-Bus error or disconnect-reason name.
///
/// Guarantees: `init(dbusName:)` is total (every name gets a kind; anything not in the table is
/// `.other`), matches names exactly and case-sensitively as D-Bus names are, and round-trips:
/// `BlueZErrorKind(dbusName: kind.dbusName) == kind` for every kind.
public enum BlueZErrorKind: Hashable, Sendable, CaseIterable {
    // MARK: org.bluez.Error.*
    /// The catch-all `org.bluez.Error.Failed`: its text says what failed (`le-connection-abort-by-local`).
    case failed
    case inProgress, notReady, alreadyConnected, alreadyExists, notConnected, notPermitted, notAuthorized
    case notSupported, doesNotExist, invalidArguments, invalidValueLength, invalidOffset
    case authenticationFailed, authenticationRejected, authenticationCanceled
    /// A pairing agent did not answer in time.
    case authenticationTimeout
    case connectionAttemptFailed
    /// The adapter named in the call is not there.
    case noSuchAdapter

    // MARK: The bus on bluetoothd's behalf
    /// The object is gone (device removed, bluetoothd restarted): `UnknownObject`, and the
    /// `UnknownMethod` older libdbus answers for a path nobody exports.
    case unknownObject
    /// bluetoothd is not on the bus: `ServiceUnknown` / `NameHasNoOwner`.
    case serviceUnavailable
    /// No reply in time: `NoReply`, `Timeout`, `TimedOut`.
    case timeout
    /// Our bus connection was lost.
    case busDisconnected

    // MARK: Device1.Disconnected reasons (BlueZ >= 5.83)
    case disconnectedByTimeout, disconnectedByRemote, disconnectedByLocal, disconnectedForSuspend
    case disconnectedForAuthentication, disconnectedForUnknownReason

    /// Any other name.
    case other

    /// Parses a D-Bus error name or a disconnect reason name.
    public init(dbusName name: String) {
        self = Self.byName[name] ?? .other
    }

    /// The name bluetoothd (or the bus) sends for this kind, the first where several share a
    /// kind. For `.other` it is the bus's generic `org.freedesktop.DBus.Error.Failed`, which
    /// names no more specific kind.
    public var dbusName: String {
        switch self {
        case .failed: "org.bluez.Error.Failed"
        case .inProgress: "org.bluez.Error.InProgress"
        case .notReady: "org.bluez.Error.NotReady"
        case .alreadyConnected: "org.bluez.Error.AlreadyConnected"
        case .alreadyExists: "org.bluez.Error.AlreadyExists"
        case .notConnected: "org.bluez.Error.NotConnected"
        case .notPermitted: "org.bluez.Error.NotPermitted"
        case .notAuthorized: "org.bluez.Error.NotAuthorized"
        case .notSupported: "org.bluez.Error.NotSupported"
        case .doesNotExist: "org.bluez.Error.DoesNotExist"
        case .invalidArguments: "org.bluez.Error.InvalidArguments"
        case .invalidValueLength: "org.bluez.Error.InvalidValueLength"
        case .invalidOffset: "org.bluez.Error.InvalidOffset"
        case .authenticationFailed: "org.bluez.Error.AuthenticationFailed"
        case .authenticationRejected: "org.bluez.Error.AuthenticationRejected"
        case .authenticationCanceled: "org.bluez.Error.AuthenticationCanceled"
        case .authenticationTimeout: "org.bluez.Error.AuthenticationTimeout"
        case .connectionAttemptFailed: "org.bluez.Error.ConnectionAttemptFailed"
        case .noSuchAdapter: "org.bluez.Error.NoSuchAdapter"
        case .unknownObject: "org.freedesktop.DBus.Error.UnknownObject"
        case .serviceUnavailable: "org.freedesktop.DBus.Error.ServiceUnknown"
        case .timeout: "org.freedesktop.DBus.Error.NoReply"
        case .busDisconnected: "org.freedesktop.DBus.Error.Disconnected"
        case .disconnectedByTimeout: "org.bluez.Reason.Timeout"
        case .disconnectedByRemote: "org.bluez.Reason.Remote"
        case .disconnectedByLocal: "org.bluez.Reason.Local"
        case .disconnectedForSuspend: "org.bluez.Reason.Suspend"
        case .disconnectedForAuthentication: "org.bluez.Reason.Authentication"
        case .disconnectedForUnknownReason: "org.bluez.Reason.Unknown"
        case .other: "org.freedesktop.DBus.Error.Failed"
        }
    }

    /// Every name with a kind: each kind's own name, plus the aliases that share a kind.
    public static let byName: [String: BlueZErrorKind] = {
        var table: [String: BlueZErrorKind] = [:]
        for kind in allCases where kind != .other { table[kind.dbusName] = kind }
        table["org.freedesktop.DBus.Error.UnknownMethod"] = .unknownObject
        table["org.freedesktop.DBus.Error.NameHasNoOwner"] = .serviceUnavailable
        table["org.freedesktop.DBus.Error.Timeout"] = .timeout
        table["org.freedesktop.DBus.Error.TimedOut"] = .timeout
        return table
    }()
}
