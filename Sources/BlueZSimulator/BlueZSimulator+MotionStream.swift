import DBus
import GATT

// The motion band's data stream as a load generator: rate and payload size set from outside
// (the control interface's SetMotionStream), so a benchmark varies the offered load without
// reconnecting anyone.

extension BlueZSimulator {
    /// Sets the data stream of the motion bands among `device` (an address; nil: every device)
    /// to `rateHz` notifications per second (1–1000) of `payloadSize` bytes (0: MTU − 3; at most
    /// 512, and never more than MTU − 3). Other kinds of device are left alone. A running stream
    /// restarts its clock at once. Throws InvalidArgs for values out of range or an unknown device.
    public func setMotionStream(device: String?, rateHz: Double, payloadSize: Int) throws {
        guard (1...1000).contains(rateHz), (0...512).contains(payloadSize) else {
            throw DBusError(
                name: DBusError.invalidArgs, message: "rate must be 1–1000 Hz and payload size 0–512 bytes")
        }
        for address in try deviceTargets(device) where devices[address]?.configuration.kind == .motionBand {
            _ = devices[address]?.signals.setMotionStream(rateHz: rateHz, payloadSize: payloadSize)
            restartMotionStream(address)
        }
    }

    /// A new rate takes effect at once: the data stream (if running) restarts its clock.
    func restartMotionStream(_ address: String) {
        guard let data = devices[address]?.characteristics.first(where: { $0.value.layout.uuid == .motionBandData })?.key
        else { return }
        devices[address]?.characteristics[data]?.streamTask?.cancel()
        devices[address]?.characteristics[data]?.streamTask = nil
        startStream(address, data)
    }
}
