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

    /// Changes a characteristic's value as the device itself would, without notifying: what the
    /// next read answers (a battery that drained, a setting changed on the device). bluetoothd
    /// has no way to know, so the exported `Value` stays as it was until a read or notification.
    /// False when the device or characteristic does not exist.
    @discardableResult
    public func setValue(address: String, characteristic uuid: BluetoothUUID, bytes: [UInt8]) -> Bool {
        guard let path = devices[address]?.characteristics.first(where: { $0.value.layout.uuid == uuid })?.key else { return false }
        devices[address]?.characteristics[path]?.value = bytes
        return true
    }
}
