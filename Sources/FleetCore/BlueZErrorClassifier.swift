// Classification lives in tables, not in `if message.contains(...)` chains scattered through the
// code: a new BlueZ error is one row here, and the tests walk every row.

/// Maps BlueZ errors and disconnect reasons to a `FailureClass`.
///
/// Pure and total: every input gets a class, and anything not in the tables is `.unknown`.
/// D-Bus error names and disconnect reasons match exactly (case-sensitive, as D-Bus names are).
/// For the catch-all `org.bluez.Error.Failed` the message decides: BlueZ's
/// `le-connection-*` / `br-connection-*` texts and a few kernel errno texts match exactly after
/// trimming surrounding whitespace.
public enum BlueZErrorClassifier {
    /// Classifies a failure as BlueZ reported it.
    public static func classify(_ failure: DeviceEvent.Failure) -> FailureClass {
        if failure.name == failedErrorName {
            return messageTable[trimmed(failure.message)] ?? .unknown
        }
        return nameTable[failure.name] ?? .unknown
    }

    /// Classifies a link loss. `nil` is a disconnect from a BlueZ older than 5.83, which only
    /// flips `Device1.Connected` and says nothing about why: the common cause is radio loss.
    public static func classifyDisconnect(_ reason: DeviceEvent.Failure?) -> FailureClass {
        guard let reason else { return .transient }
        return classify(reason)
    }

    // MARK: - Tables

    static let failedErrorName = "org.bluez.Error.Failed"

    /// Exact D-Bus error names and disconnect reasons.
    static let nameTable: [String: FailureClass] = [
        "org.bluez.Error.InProgress": .busy,
        "org.bluez.Error.AlreadyConnected": .busy,
        "org.bluez.Error.NotReady": .notReady,
        "org.bluez.Error.NotConnected": .transient,
        "org.bluez.Error.ConnectionAttemptFailed": .transient,
        "org.bluez.Error.NotPermitted": .denied,
        "org.bluez.Error.NotAuthorized": .denied,
        "org.bluez.Error.AuthenticationFailed": .denied,
        "org.bluez.Error.AuthenticationRejected": .denied,
        "org.bluez.Error.AuthenticationCanceled": .denied,
        // A pairing agent that did not answer in time: the device may well accept next time.
        "org.bluez.Error.AuthenticationTimeout": .transient,
        "org.bluez.Error.DoesNotExist": .gone,
        "org.bluez.Error.NoSuchAdapter": .bluetoothOff,
        // The device lacks a feature we asked for (e.g. notify on a characteristic without it).
        "org.bluez.Error.NotSupported": .protocol,
        "org.freedesktop.DBus.Error.UnknownObject": .gone,
        // bluetoothd is not on the bus (yet, or any more).
        "org.freedesktop.DBus.Error.ServiceUnknown": .notReady,
        "org.freedesktop.DBus.Error.NameHasNoOwner": .notReady,
        "org.freedesktop.DBus.Error.NoReply": .transient,
        "org.freedesktop.DBus.Error.Timeout": .transient,
        "org.freedesktop.DBus.Error.TimedOut": .transient,
        // Device1.Disconnected reasons (BlueZ >= 5.83).
        "org.bluez.Reason.Timeout": .transient,
        "org.bluez.Reason.Remote": .transient,
        "org.bluez.Reason.Local": .transient,
        "org.bluez.Reason.Suspend": .transient,
        "org.bluez.Reason.Authentication": .denied,
        "org.bluez.Reason.Unknown": .unknown,
    ]

    /// Exact messages of `org.bluez.Error.Failed` (BlueZ's connection error strings, and the
    /// strerror texts older code paths pass through).
    static let messageTable: [String: FailureClass] = [
        "le-connection-abort-by-local": .transient,
        "le-connection-abort-by-remote": .transient,
        "le-connection-timeout": .transient,
        "le-connection-refused": .transient,
        "le-connection-link-layer-protocol-error": .transient,
        "le-connection-concurrent-connection-limit": .outOfSlots,
        "le-connection-adapter-not-powered": .bluetoothOff,
        "le-connection-busy": .busy,
        "le-connection-already-connected": .busy,
        "le-connection-gatt-browsing": .protocol,
        "le-connection-key-missing": .denied,
        "br-connection-canceled": .transient,
        "br-connection-aborted-by-local": .transient,
        "br-connection-aborted-by-remote": .transient,
        "br-connection-timeout": .transient,
        "br-connection-page-timeout": .transient,
        "br-connection-refused": .transient,
        "br-connection-concurrent-connection-limit": .outOfSlots,
        "br-connection-adapter-not-powered": .bluetoothOff,
        "br-connection-busy": .busy,
        "br-connection-key-missing": .denied,
        "Software caused connection abort": .transient,
        "Connection timed out": .transient,
        "Host is down": .transient,
        "Operation already in progress": .busy,
        "Resource temporarily unavailable": .busy,
    ]

    private static func trimmed(_ text: String) -> String {
        let isSpace: (Character) -> Bool = { $0.isWhitespace }
        guard let first = text.firstIndex(where: { !isSpace($0) }),
              let last = text.lastIndex(where: { !isSpace($0) })
        else { return "" }
        return String(text[first...last])
    }
}
