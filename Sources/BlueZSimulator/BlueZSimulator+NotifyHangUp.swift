import DBus

// A notify socket that bluetoothd closes while the link stays up: BlueZ does so when its end of
// the AcquireNotify session fails (its notify io is destroyed, e.g. on a socket error), and
// then reports `NotifyAcquired` and `Notifying` false (src/gatt-client.c, notify_io_destroy).
// A client that only watches the link keeps the device "ready" and hears nothing more.

extension BlueZSimulator {
    /// Closes bluetoothd's end of every AcquireNotify socket of `address` (every device when
    /// nil) and ends those notify sessions, the link staying up. Returns how many were closed.
    @discardableResult
    public func closeNotifySockets(address: String?) async -> Int {
        var closed = 0
        for (deviceAddress, device) in devices where address == nil || deviceAddress == address {
            for (path, characteristic) in device.characteristics where characteristic.notifySocket != nil {
                await notifySocketClosed(deviceAddress, path)
                closed += 1
            }
        }
        return closed
    }
}
