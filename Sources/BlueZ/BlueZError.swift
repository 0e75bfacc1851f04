import BluetoothVocabulary
import DBus

/// An error from bluetoothd (or from the bus on its behalf), with a kind to branch on and the
/// raw name and text kept for logs and for FleetCore's failure classification.
public struct BlueZError: Error, Hashable, Sendable, CustomStringConvertible {
    /// What went wrong, as far as a caller needs to branch: BlueZ's one table of error names
    /// (`BlueZErrorKind`). Unrecognised names are `.other`.
    public typealias Kind = BlueZErrorKind

    public let kind: Kind
    /// The D-Bus error name exactly as received (`org.bluez.Error.Failed`).
    public let name: String
    /// The error text exactly as received (`le-connection-abort-by-local`).
    public let message: String

    public init(name: String, message: String) {
        self.name = name
        self.message = message
        self.kind = Kind(dbusName: name)
    }

    public init(_ error: DBusError) {
        self.init(name: error.name, message: error.message)
    }

    public var description: String { message.isEmpty ? name : "\(name): \(message)" }
}
