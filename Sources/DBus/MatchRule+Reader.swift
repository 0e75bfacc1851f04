import CDBus

extension MatchRule {
    /// The unique name a signal's sender must have to match: the rule's own sender, or the
    /// current owner of the well-known name it names (`senderOwner`); nil when it has none.
    func expectedSender(senderOwner: String?) -> String? {
        guard let sender else { return nil }
        return sender.hasPrefix(":") || sender == "org.freedesktop.DBus" ? sender : senderOwner
    }

    /// `matches(_:senderOwner:)` for a message not decoded yet: the same test, comparing
    /// libdbus's header strings in place (no Swift string made per message). `expectedSender`
    /// is `expectedSender(senderOwner:)`, worked out once rather than per message.
    func matches(_ message: borrowing DBusMessageReader, expectedSender: String?) -> Bool {
        if sender != nil {
            guard let expectedSender, message.hasSender(expectedSender) else { return false }
        }
        if let path, !message.hasPath(path) { return false }
        if let pathNamespace, !message.isInNamespace(pathNamespace) { return false }
        if let interface {
            guard let own = dbus_message_get_interface(message.raw), CStringComparison.equal(own, interface) else { return false }
        }
        if let member {
            guard let own = dbus_message_get_member(message.raw), CStringComparison.equal(own, member) else { return false }
        }
        if let arg0 {
            // Like the bus: only a first argument that is a string can match.
            let matched = try? message.withArguments { arguments throws(DBusDecodingError) in
                arguments.nextIs(.string) ? try arguments.readString(equalTo: arg0) : false
            }
            guard matched == true else { return false }
        }
        return true
    }
}

extension DBusMessageReader {
    /// Whether the path is `namespace` or lies below it (`DBusObjectPath.isDescendant(of:)`).
    func isInNamespace(_ namespace: DBusObjectPath) -> Bool {
        guard let own = dbus_message_get_path(raw) else { return false }
        if namespace.rawValue == "/" { return true }
        guard CStringComparison.hasPrefix(own, namespace.rawValue) else { return false }
        let next = own[namespace.rawValue.utf8.count]
        return next == 0 || next == CChar(UInt8(ascii: "/"))
    }
}
