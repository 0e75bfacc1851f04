/// A decoded D-Bus message: header fields plus a typed body.
///
/// This is a plain value, safe to send across actors; libdbus's own message object never leaves
/// the connection's thread.
public struct DBusMessage: Sendable, CustomStringConvertible {
    public enum Kind: Sendable, Hashable {
        case methodCall, methodReturn, error, signal
    }

    public var kind: Kind
    public var serial: UInt32 = 0
    public var replySerial: UInt32?
    /// The sender's unique name (`:1.42`), or `org.freedesktop.DBus` for the bus itself.
    public var sender: String?
    public var destination: String?
    public var path: DBusObjectPath?
    public var interface: String?
    public var member: String?
    public var errorName: String?
    public var noReplyExpected = false
    /// For a method call: whether the bus may start the destination's service (D-Bus
    /// activation) when nobody owns the name. False: the call fails at once with
    /// `NameHasNoOwner` instead (`NO_AUTO_START`).
    public var autoStart = true
    public var body: [DBusValue]

    public init(kind: Kind, body: [DBusValue] = []) {
        self.kind = kind
        self.body = body
    }

    /// The body's signature (`sa{sv}as`).
    public var signature: String { body.map(\.type.signature).joined() }

    /// A method call message.
    public static func methodCall(
        destination: String?, path: DBusObjectPath, interface: String?, member: String, body: [DBusValue] = [],
        autoStart: Bool = true
    ) -> DBusMessage {
        var message = DBusMessage(kind: .methodCall, body: body)
        message.autoStart = autoStart
        message.destination = destination
        message.path = path
        message.interface = interface
        message.member = member
        return message
    }

    /// A signal message (broadcast when `destination` is nil).
    public static func signal(
        path: DBusObjectPath, interface: String, member: String, body: [DBusValue] = [], destination: String? = nil
    ) -> DBusMessage {
        var message = DBusMessage(kind: .signal, body: body)
        message.destination = destination
        message.path = path
        message.interface = interface
        message.member = member
        return message
    }

    /// For an error message, the error it carries (the first string argument is its text).
    public var error: DBusError? {
        guard kind == .error, let name = errorName else { return nil }
        if case .string(let text)? = body.first { return DBusError(name: name, message: text) }
        return DBusError(name: name)
    }

    public var description: String {
        var parts: [String] = ["\(kind)"]
        if let sender { parts.append("sender=\(sender)") }
        if let destination { parts.append("destination=\(destination)") }
        if let path { parts.append("path=\(path)") }
        if let interface { parts.append("interface=\(interface)") }
        if let member { parts.append("member=\(member)") }
        if let errorName { parts.append("error=\(errorName)") }
        parts.append("signature='\(signature)'")
        return parts.joined(separator: " ")
    }
}
