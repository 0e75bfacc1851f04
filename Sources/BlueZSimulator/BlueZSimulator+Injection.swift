import DBus
import GATT

extension BlueZSimulator {
    /// Sends one notification with arbitrary bytes on a device's characteristic, the way its own
    /// stream would (AcquireNotify socket or `Value` PropertiesChanged): for tests of what a
    /// client does with malformed or unusual values. False when the characteristic has no
    /// notification session or the device is not connected.
    @discardableResult
    public func injectNotification(address: String, characteristic uuid: BluetoothUUID, bytes: [UInt8]) async -> Bool {
        guard let device = devices[address],
            let (path, characteristic) = device.characteristics.first(where: { $0.value.layout.uuid == uuid }),
            characteristic.isNotifying
        else { return false }
        await deliver(address, path, bytes)
        return true
    }
}
