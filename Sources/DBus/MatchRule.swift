/// Which signals a subscription wants: the bus-side match rule (sent with `AddMatch`) and the
/// same test applied locally, since one connection carries the signals of all subscriptions.
///
/// `sender` may be a unique name (`:1.42`) or a well-known name (`org.bluez`); for a well-known
/// name the connection tracks its current owner and accepts only signals from that owner, because
/// signals carry the sender's unique name, never the well-known one.
public struct MatchRule: Hashable, Sendable, CustomStringConvertible {
    public var sender: String?
    public var path: DBusObjectPath?
    /// Matches `pathNamespace` itself and every path below it.
    public var pathNamespace: DBusObjectPath?
    public var interface: String?
    public var member: String?
    /// The first argument, when it is a string (e.g. the name in `NameOwnerChanged`, or the
    /// interface in `PropertiesChanged`).
    public var arg0: String?

    public init(
        sender: String? = nil, path: DBusObjectPath? = nil, pathNamespace: DBusObjectPath? = nil,
        interface: String? = nil, member: String? = nil, arg0: String? = nil
    ) {
        self.sender = sender
        self.path = path
        self.pathNamespace = pathNamespace
        self.interface = interface
        self.member = member
        self.arg0 = arg0
    }

    /// Checks names before the rule is sent to the bus.
    func validate() throws {
        if let sender { try DBusValidation.checkBusName(sender) }
        if let interface { try DBusValidation.checkInterfaceName(interface) }
        if let member { try DBusValidation.checkMemberName(member) }
        if let arg0 { try DBusValidation.checkString(arg0) }
    }

    /// The rule in the bus's syntax, values quoted with `'` escaped as the specification says.
    public var ruleString: String {
        var parts = ["type='signal'"]
        func add(_ key: String, _ value: String?) {
            guard let value else { return }
            parts.append("\(key)=" + Self.quote(value))
        }
        add("sender", sender)
        add("path", path?.rawValue)
        add("path_namespace", pathNamespace?.rawValue)
        add("interface", interface)
        add("member", member)
        add("arg0", arg0)
        return parts.joined(separator: ",")
    }

    public var description: String { ruleString }

    /// `'` cannot appear inside quotes: close the quote, write `\'`, reopen.
    private static func quote(_ value: String) -> String {
        var quoted = "'"
        for character in value {
            quoted += character == "'" ? "'\\''" : String(character)
        }
        return quoted + "'"
    }

    /// The local half of matching. `senderOwner` is the unique name that currently owns a
    /// well-known `sender` (nil when it has no owner, so nothing matches).
    func matches(_ message: DBusMessage, senderOwner: String?) -> Bool {
        guard message.kind == .signal else { return false }
        if sender != nil {
            guard let expected = expectedSender(senderOwner: senderOwner), message.sender == expected else { return false }
        }
        if let path, message.path != path { return false }
        if let pathNamespace {
            guard let messagePath = message.path, messagePath.isDescendant(of: pathNamespace) else { return false }
        }
        if let interface, message.interface != interface { return false }
        if let member, message.member != member { return false }
        if let arg0 {
            guard case .string(let first)? = message.body.first, first == arg0 else { return false }
        }
        return true
    }
}
