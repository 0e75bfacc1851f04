import BluetoothVocabulary
import DBus

/// What the client saw happen in bluetoothd, in bus order, each event after its signal was
/// applied to the mirror (`BlueZClient.tree`).
///
/// Typed: every signal is parsed once, where the client applies it, so a consumer never reads a
/// variant dictionary. One signal can make several events (an `InterfacesAdded` of a device with
/// its services, a `PropertiesChanged` of `Connected` and `ServicesResolved` together), in the
/// order their cases are declared here. A change no case describes (an adapter's `Discovering`, a
/// device's `ManufacturerData`, …) updates the mirror, and wakes `waitForTree`, without an event.
///
/// A known property of the wrong type makes the whole signal malformed: it is counted
/// (`BlueZClient.malformedSignals`), reported as `malformedSignal` and not applied, never fatal.
public enum BlueZEvent: Sendable, Hashable {
    /// bluetoothd is on the bus (at start, or back after a restart with a new unique name); the
    /// mirror was rebuilt from a fresh `GetManagedObjects`, whose adapters and devices these are
    /// (path order).
    case appeared(owner: String, adapters: [BlueZAdapter], devices: [BlueZDevice])
    /// bluetoothd left the bus: every object it exported is gone (the mirror is now empty).
    case vanished
    /// bluetoothd owns its name but its `GetManagedObjects` failed (an error, a timeout, a reply
    /// that did not decode): it is not reported present; the call is tried again in `retryIn`,
    /// for as long as it keeps its name.
    case snapshotFailed(attempt: Int, error: String, retryIn: Duration)

    // MARK: Adapters

    /// An `Adapter1` object appeared (as the mirror holds it after the signal).
    case adapterAdded(BlueZAdapter)
    /// An adapter's `Powered` changed (bluetoothd sent it, even when it is the value it had).
    case adapterPowerChanged(AdapterID, powered: Bool)
    /// An adapter's `Adapter1` interface went away.
    case adapterRemoved(AdapterID)

    // MARK: Devices

    /// A `Device1` object appeared (as the mirror holds it after the signal).
    case deviceAdded(BlueZDevice)
    /// A `Device1` object went away; the identity it had in the mirror, if it had a valid one.
    case deviceRemoved(DBusObjectPath, DeviceID?)
    /// A device object's `Connected` changed.
    case deviceConnectionChanged(DBusObjectPath, connected: Bool)
    /// A device object's `ServicesResolved` changed (true: its GATT objects are exported).
    case servicesResolvedChanged(DBusObjectPath, resolved: Bool)
    /// bluetoothd sent new values of these properties of a device object (read them from the
    /// mirror's `BlueZDevice`; a property only invalidated is not reported).
    case deviceUpdated(DBusObjectPath, BlueZDeviceFields)
    /// `Device1.Disconnected(reason, message)` (BlueZ ≥ 5.83): why a link ended, as bluetoothd
    /// names it (`org.bluez.Reason.Remote`, …).
    case deviceDisconnected(DBusObjectPath, reason: String, message: String)

    // MARK: GATT

    /// A GATT service, characteristic or descriptor object appeared.
    case gattObjectAdded(DBusObjectPath, BlueZGATTObjectKind)
    /// A GATT service, characteristic or descriptor object went away.
    case gattObjectRemoved(DBusObjectPath, BlueZGATTObjectKind)
    /// A characteristic's `Notifying` changed.
    case notifyingChanged(DBusObjectPath, notifying: Bool)
    /// A characteristic's `Value` changed (a notification, or a read's result), with the
    /// characteristic it belongs to: its object, its device's object and identity, its UUID.
    /// With value receivers set (`BlueZClient.setValueReceivers`), a change of `Value` alone
    /// goes to the receiver instead and makes no event.
    case valueChanged(BlueZCharacteristicSource, bytes: [UInt8])

    /// A signal from bluetoothd that could not be decoded, or that carried a known property of
    /// the wrong type (counted and skipped, never fatal).
    case malformedSignal(String)
}

/// Which properties of a `Device1` object a `deviceUpdated` event reports new values for
/// (`Connected` and `ServicesResolved` have events of their own).
public struct BlueZDeviceFields: OptionSet, Sendable, Hashable {
    public let rawValue: UInt16
    public init(rawValue: UInt16) { self.rawValue = rawValue }

    public static let rssi = BlueZDeviceFields(rawValue: 1 << 0)
    public static let txPower = BlueZDeviceFields(rawValue: 1 << 1)
    public static let name = BlueZDeviceFields(rawValue: 1 << 2)
    public static let alias = BlueZDeviceFields(rawValue: 1 << 3)
    public static let uuids = BlueZDeviceFields(rawValue: 1 << 4)
    public static let paired = BlueZDeviceFields(rawValue: 1 << 5)
    public static let bonded = BlueZDeviceFields(rawValue: 1 << 6)
    public static let trusted = BlueZDeviceFields(rawValue: 1 << 7)
    public static let blocked = BlueZDeviceFields(rawValue: 1 << 8)
}

/// The kinds of GATT object bluetoothd exports below a device.
public enum BlueZGATTObjectKind: Sendable, Hashable, CaseIterable {
    case service
    case characteristic
    case descriptor

    /// The D-Bus interface of objects of this kind.
    public var interface: String {
        switch self {
        case .service: BlueZInterfaces.gattService
        case .characteristic: BlueZInterfaces.gattCharacteristic
        case .descriptor: BlueZInterfaces.gattDescriptor
        }
    }
}
