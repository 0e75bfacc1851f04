// BlueZ reports failures as a D-Bus error name plus a free-text message, and (since 5.83) link
// loss as a `Device1.Disconnected(reason, message)` signal. Both travel to the state machine with
// their kind parsed once (`BlueZErrorKind`) and their raw name and text kept, so that
// classification happens in exactly one place: `BlueZErrorClassifier`.

extension DeviceEvent {
    /// A failure as BlueZ reported it, before classification.
    ///
    /// `kind` is what the name means; `name` is the D-Bus error name
    /// (`org.bluez.Error.Failed`, `org.freedesktop.DBus.Error.UnknownObject`) or disconnect
    /// reason (`org.bluez.Reason.Remote`) exactly as received, and `message` the accompanying text
    /// (`le-connection-abort-by-remote`), empty when BlueZ sent none. Name and text are kept
    /// verbatim so logs can show `BLUEZ_ERROR` as received.
    public struct Failure: Hashable, Sendable, Codable, CustomStringConvertible {
        public var kind: BlueZErrorKind
        public var name: String
        public var message: String

        /// A failure whose kind is already known (a `BlueZError` carries one).
        public init(kind: BlueZErrorKind, name: String, message: String = "") {
            self.kind = kind
            self.name = name
            self.message = message
        }

        /// A failure by its received name; the kind is parsed from it.
        public init(name: String, message: String = "") {
            self.init(kind: BlueZErrorKind(dbusName: name), name: name, message: message)
        }

        /// A failure the runtime reports itself, under the kind's own name.
        public init(_ kind: BlueZErrorKind, message: String = "") {
            self.init(kind: kind, name: kind.dbusName, message: message)
        }

        public var description: String { message.isEmpty ? name : "\(name): \(message)" }
    }
}
