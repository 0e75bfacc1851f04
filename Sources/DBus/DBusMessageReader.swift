import CDBus

/// A received message as libdbus holds it, read in place: header fields compared without
/// copying them, arguments read with a `DBusArgumentReader`, and no `DBusValue` built unless
/// asked for. It is what a subscription's `claim` sees (see
/// `DBusConnection.subscribe(matching:claim:onSignals:onEnd:)`), for high-rate signals whose
/// generic decoding would cost more than their handling.
///
/// The message is valid only during the call it is passed to, so the reader cannot outlive it:
/// it is `~Copyable`, handed out `borrowing`, has no public initializer, and everything it
/// returns is a Swift value of its own (a copy), never a pointer into the message.
///
/// `@unchecked Sendable`, so that a claim may hand it to the actor whose executor is the
/// connection's thread (`DBusConnection.callIsolated`): a borrowed, non-copyable value cannot be
/// captured by an escaping closure or kept, so whatever uses it runs within the call it was lent
/// for, on that thread, while the connection's thread waits in that call, never beside libdbus.
/// The pointers it holds (the message, its sender field) are valid for exactly that call.
public struct DBusMessageReader: ~Copyable, @unchecked Sendable {
    let raw: OpaquePointer
    /// The sender field, looked up once: every subscription's rule and claim compares it.
    private let senderField: UnsafePointer<CChar>?

    /// `sender` is the message's sender field (`dbus_message_get_sender`), which the caller has
    /// read already.
    init(raw: OpaquePointer, sender: UnsafePointer<CChar>?) {
        self.raw = raw
        senderField = sender
    }

    /// The sender's serial number for this message.
    public var serial: UInt32 { dbus_message_get_serial(raw) }

    /// The sender's unique name (`:1.42`), as a new string.
    public var sender: String? { senderField.map { String(cString: $0) } }

    /// The object path, as a new value.
    public var path: DBusObjectPath? {
        // libdbus validated the path when the message arrived.
        dbus_message_get_path(raw).map { DBusObjectPath(validated: String(cString: $0)) }
    }

    /// The interface, as a new string.
    public var interface: String? { dbus_message_get_interface(raw).map { String(cString: $0) } }

    /// The member (signal or method name), as a new string.
    public var member: String? { dbus_message_get_member(raw).map { String(cString: $0) } }

    /// The body's signature (`sa{sv}as`), as a new string.
    public var signature: String { dbus_message_get_signature(raw).map { String(cString: $0) } ?? "" }

    /// Whether the sender is `name` (a unique name: signals never carry well-known ones).
    public func hasSender(_ name: String) -> Bool {
        guard let senderField else { return false }
        return CStringComparison.equal(senderField, name)
    }

    /// Whether the object path is `path`.
    public func hasPath(_ path: DBusObjectPath) -> Bool {
        guard let own = dbus_message_get_path(raw) else { return false }
        return CStringComparison.equal(own, path.rawValue)
    }

    /// Whether the message is about `member` of `interface` (`PropertiesChanged` of
    /// `org.freedesktop.DBus.Properties`).
    public func hasMember(_ member: String, of interface: String) -> Bool {
        guard let ownInterface = dbus_message_get_interface(raw), let ownMember = dbus_message_get_member(raw) else {
            return false
        }
        return CStringComparison.equal(ownMember, member) && CStringComparison.equal(ownInterface, interface)
    }

    /// Whether the body's signature is exactly `signature`: check it before reading arguments
    /// whose layout a reading assumes.
    public func hasSignature(_ signature: String) -> Bool {
        guard let own = dbus_message_get_signature(raw) else { return signature.isEmpty }
        return CStringComparison.equal(own, signature)
    }

    /// Reads the arguments: `body` gets a reader at the first one. Whatever `body` returns must
    /// be a value of its own (the reader hands out copies only).
    @inlinable
    public func withArguments<Result>(
        _ body: (inout DBusArgumentReader) throws(DBusDecodingError) -> Result
    ) throws(DBusDecodingError) -> Result {
        var arguments = argumentReader()
        return try body(&arguments)
    }

    @usableFromInline
    func argumentReader() -> DBusArgumentReader {
        var iter = DBusMessageIter()
        // False only for a message without arguments; the iterator is then at its end.
        _ = dbus_message_iter_init(raw, &iter)
        return DBusArgumentReader(iter: iter)
    }
}
