// BlueZ reports failures as a D-Bus error name plus a free-text message, and (since 5.83) link
// loss as a `Device1.Disconnected(reason, message)` signal. Both travel to the state machine raw,
// so that classification happens in exactly one place: `BlueZErrorClassifier`.

extension DeviceEvent {
    /// A failure exactly as BlueZ reported it, before classification.
    ///
    /// `name` is a D-Bus error name (`org.bluez.Error.Failed`,
    /// `org.freedesktop.DBus.Error.UnknownObject`) or a disconnect reason
    /// (`org.bluez.Reason.Remote`); `message` is the accompanying text
    /// (`le-connection-abort-by-remote`), empty when BlueZ sent none. Kept verbatim so logs can show
    /// `BLUEZ_ERROR` as received.
    public struct Failure: Hashable, Sendable, CustomStringConvertible {
        public var name: String
        public var message: String

        public init(name: String, message: String = "") {
            self.name = name
            self.message = message
        }

        public var description: String { message.isEmpty ? name : "\(name): \(message)" }
    }
}
