import DBus

/// What the client saw happen in bluetoothd, in bus order, after it was applied to the mirror.
public enum BlueZEvent: Sendable {
    /// bluetoothd is on the bus (at start, or back after a restart with a new unique name); the
    /// mirror was rebuilt from a fresh `GetManagedObjects`.
    case appeared(owner: String)
    /// bluetoothd left the bus: every object it exported is gone (the mirror is now empty).
    case vanished
    case interfacesAdded(DBusObjectPath, interfaces: [String])
    case interfacesRemoved(DBusObjectPath, interfaces: [String])
    case propertiesChanged(DBusObjectPath, interface: String, changed: [String: DBusValue], invalidated: [String])
    /// `Device1.Disconnected(reason, message)` (BlueZ ≥ 5.83).
    case deviceDisconnected(DBusObjectPath, reason: String, message: String)
    /// A signal from bluetoothd that could not be decoded (counted and skipped, never fatal).
    case malformedSignal(String)
}
