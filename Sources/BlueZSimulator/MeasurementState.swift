import GATT

/// Run-time state of a measurement device (a blood-pressure cuff, a weight scale), owned by
/// `BlueZSimulator`: whether it is awake, the measurements it keeps until a client took them,
/// its clock.
struct MeasurementState {
    /// Awake: advertising, answering a connection. Devices without a wake schedule never sleep.
    var awake: Bool
    /// Measurements taken and not yet delivered, oldest first (encoded as the device indicates them).
    var queue: [[UInt8]] = []
    /// Every measurement taken since start, in order (for tests to compare with what arrived).
    var taken: [[UInt8]] = []
    var clock: DeviceClock
    /// Ends the awake window of the last wake.
    var windowTask: Task<Void, Never>?
    /// Indicates the queue to the client; one at a time, tied to the link epoch it started on.
    var burstTask: Task<Void, Never>?
    var burstEpoch: Int?
    /// bluetoothd's re-enabling of the sessions kept from the last link (one per link).
    var resumeTask: Task<Void, Never>?
}

extension BluetoothUUID {
    // The GATT module has no names for the feature characteristics (nothing reads them there).
    /// Blood Pressure Feature (0x2A49).
    static let bloodPressureFeatureCharacteristic = BluetoothUUID(0x2A49)
    /// Weight Scale Feature (0x2A9E).
    static let weightScaleFeatureCharacteristic = BluetoothUUID(0x2A9E)
}
