import GATT

extension BluetoothUUID {
    /// The motion band's vendor service (a 128-bit UUID, as custom services are).
    public static let motionBandService = BluetoothUUID("7a1e0001-3c6f-4b8d-9e2a-5d0c8f6b1a40") ?? BluetoothUUID(0xFFFF)
    /// Streams samples: notifications of up to MTU−3 bytes at the band's rate.
    public static let motionBandData = BluetoothUUID("7a1e0002-3c6f-4b8d-9e2a-5d0c8f6b1a40") ?? BluetoothUUID(0xFFFF)
    /// Takes commands (write without response) and answers each by a notification.
    public static let motionBandControl = BluetoothUUID("7a1e0003-3c6f-4b8d-9e2a-5d0c8f6b1a40") ?? BluetoothUUID(0xFFFF)
    /// Client Characteristic Configuration descriptor.
    public static let clientCharacteristicConfiguration = BluetoothUUID(0x2902)
}
