import BluetoothVocabulary
import DBus

/// A characteristic whose values the client delivers on the D-Bus path, with what a consumer
/// needs to attribute them (`BlueZObjectTree.characteristicSource(at:)`): `setValueReceivers`
/// asks where its values go once, with this, rather than attributing every value again, and a
/// `valueChanged` event carries it.
public struct BlueZCharacteristicSource: Sendable, Hashable {
    /// The `GattCharacteristic1` object.
    public let characteristicPath: DBusObjectPath
    /// The `Device1` object the characteristic belongs to.
    public let devicePath: DBusObjectPath
    /// The device's `Address` and `AddressType` as bluetoothd reports them (nil when absent).
    public let address: String?
    public let addressType: String?
    /// The device's identity from those (see `BlueZDevice.identity`).
    public var deviceIdentity: DeviceID? { DeviceID(bluezAddress: address, addressType: addressType) }
    /// The characteristic's UUID, lower-case 128-bit as BlueZ spells it.
    public let uuid: String
}

/// Takes the values of one characteristic (each one notification's bytes), on the connection's
/// thread: see `BlueZClient.setValueReceivers`.
public typealias BlueZValueReceiver = @Sendable (_ bytes: [UInt8]) -> Void
