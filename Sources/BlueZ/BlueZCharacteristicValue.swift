import DBus

/// A characteristic value bluetoothd announced (a notification or indication on the D-Bus path,
/// `Value` in `PropertiesChanged`), with what a consumer needs to attribute it and nothing more.
public struct BlueZCharacteristicValue: Sendable {
    /// The `Device1` object the characteristic belongs to.
    public let devicePath: DBusObjectPath
    /// The device's `Address` and `AddressType` as bluetoothd reports them (nil when absent).
    public let address: String?
    public let addressType: String?
    /// The characteristic's UUID, lower-case 128-bit as BlueZ spells it.
    public let uuid: String
    public let bytes: [UInt8]
}
