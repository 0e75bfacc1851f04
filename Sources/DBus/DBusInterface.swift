// Descriptions of what a connection exports: interfaces made of methods, properties and
// signals. The connection implements Introspect, Properties and ObjectManager from these, so an
// exporter only writes its own methods.

/// A named, typed argument, as it appears in introspection XML.
public struct DBusArgument: Sendable, Hashable {
    public var name: String
    public var type: DBusType

    public init(_ name: String, _ type: DBusType) {
        self.name = name
        self.type = type
    }
}

/// An incoming method call, as a handler sees it.
public struct DBusMethodCall: Sendable {
    public let message: DBusMessage
    public var body: [DBusValue] { message.body }
    /// The caller's unique name.
    public var sender: String { message.sender ?? "" }
    public var path: DBusObjectPath { message.path ?? .root }
}

/// An exported method.
public struct DBusMethod: Sendable {
    public enum Handler: Sendable {
        /// Runs on the connection's thread: keep it short and non-blocking.
        case sync(@Sendable (DBusMethodCall) throws -> [DBusValue])
        /// Runs in its own task; the reply is sent when it returns.
        case async(@Sendable (DBusMethodCall) async throws -> [DBusValue])
    }

    public var name: String
    public var inputs: [DBusArgument]
    public var outputs: [DBusArgument]
    public var handler: Handler

    /// Throw `DBusError` from a handler to send that error reply; any other error becomes
    /// `org.freedesktop.DBus.Error.Failed` with the error's description.
    public init(_ name: String, inputs: [DBusArgument] = [], outputs: [DBusArgument] = [], handler: Handler) {
        self.name = name
        self.inputs = inputs
        self.outputs = outputs
        self.handler = handler
    }

    var inputSignature: String { inputs.map(\.type.signature).joined() }
    var outputSignature: String { outputs.map(\.type.signature).joined() }
}

/// An exported property. Values live in the connection; the exporter updates them with
/// `setProperty`, which emits `PropertiesChanged`.
public struct DBusProperty: Sendable, Hashable {
    public enum Access: String, Sendable { case read, write, readwrite }

    public var name: String
    public var type: DBusType
    public var access: Access
    /// False for properties whose changes are not announced (`EmitsChangedSignal=false`).
    public var emitsChange: Bool

    public init(_ name: String, _ type: DBusType, access: Access = .read, emitsChange: Bool = true) {
        self.name = name
        self.type = type
        self.access = access
        self.emitsChange = emitsChange
    }
}

/// An exported signal (for introspection; emit with `emitSignal`).
public struct DBusSignal: Sendable, Hashable {
    public var name: String
    public var arguments: [DBusArgument]

    public init(_ name: String, arguments: [DBusArgument] = []) {
        self.name = name
        self.arguments = arguments
    }
}

/// An interface an object exports.
public struct DBusInterface: Sendable {
    public var name: String
    public var methods: [DBusMethod]
    public var properties: [DBusProperty]
    public var signals: [DBusSignal]
    /// Called before a peer's `Set` of a writable property is stored; throw `DBusError` to refuse
    /// it. Runs on the connection's thread.
    public var willSet: (@Sendable (_ path: DBusObjectPath, _ property: String, _ value: DBusValue) throws -> Void)?

    public init(
        _ name: String, methods: [DBusMethod] = [], properties: [DBusProperty] = [], signals: [DBusSignal] = [],
        willSet: (@Sendable (DBusObjectPath, String, DBusValue) throws -> Void)? = nil
    ) {
        self.name = name
        self.methods = methods
        self.properties = properties
        self.signals = signals
        self.willSet = willSet
    }

    func method(named name: String) -> DBusMethod? { methods.first { $0.name == name } }
    func property(named name: String) -> DBusProperty? { properties.first { $0.name == name } }
}
