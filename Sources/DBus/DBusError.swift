/// An error reply from a peer, or an error produced locally in the same shape
/// (`org.freedesktop.DBus.Error.NoReply` for a timeout, `…Disconnected` when the bus went away).
///
/// Callers branch on `name`, never on `message`: the name is the stable part of the protocol.
public struct DBusError: Error, Hashable, Sendable, CustomStringConvertible {
    public let name: String
    public let message: String

    public init(name: String, message: String = "") {
        self.name = name
        self.message = message
    }

    public var description: String { message.isEmpty ? name : "\(name): \(message)" }

    // MARK: - Standard error names (org.freedesktop.DBus.Error.*)

    public static let failed = "org.freedesktop.DBus.Error.Failed"
    public static let noReply = "org.freedesktop.DBus.Error.NoReply"
    public static let timeout = "org.freedesktop.DBus.Error.Timeout"
    public static let disconnected = "org.freedesktop.DBus.Error.Disconnected"
    public static let serviceUnknown = "org.freedesktop.DBus.Error.ServiceUnknown"
    public static let nameHasNoOwner = "org.freedesktop.DBus.Error.NameHasNoOwner"
    public static let unknownObject = "org.freedesktop.DBus.Error.UnknownObject"
    public static let unknownInterface = "org.freedesktop.DBus.Error.UnknownInterface"
    public static let unknownMethod = "org.freedesktop.DBus.Error.UnknownMethod"
    public static let unknownProperty = "org.freedesktop.DBus.Error.UnknownProperty"
    public static let propertyReadOnly = "org.freedesktop.DBus.Error.PropertyReadOnly"
    public static let invalidArgs = "org.freedesktop.DBus.Error.InvalidArgs"
    public static let invalidSignature = "org.freedesktop.DBus.Error.InvalidSignature"
    public static let accessDenied = "org.freedesktop.DBus.Error.AccessDenied"
    public static let noMemory = "org.freedesktop.DBus.Error.NoMemory"
}
