import DBus
import GATT

// Notification streams: one task per notifying characteristic, paced by a deadline clock.

extension BlueZSimulator {
    /// Starts the characteristic's periodic notifications if it has a rate, a notify session
    /// and no stream yet. (A stream started without a session would end at once and block the
    /// next start.)
    func startStream(_ address: String, _ path: DBusObjectPath) {
        guard let device = devices[address], let characteristic = device.characteristics[path],
            characteristic.isNotifying, characteristic.streamTask == nil, characteristic.layout.notifyInterval != nil
        else { return }
        let epoch = device.linkEpoch
        // A real device notifies in its own connection events, whose anchors have nothing to do
        // with another device's: streams that start together must not tick together. Each
        // starts at a phase drawn from the device's own random sequence, within one period.
        let phase = devices[address]?.random.unit() ?? 0
        devices[address]?.characteristics[path]?.streamTask = Task {
            let clock = ContinuousClock()
            var deadline = clock.now
            if let period = self.streamPeriod(address, path) { deadline += period * phase - period }
            while !Task.isCancelled {
                guard let period = self.streamPeriod(address, path) else { return }
                deadline += period
                // After a stall, resume the rate instead of bursting to catch up.
                if deadline < clock.now - period * 4 { deadline = clock.now }
                try? await Task.sleep(until: deadline, clock: clock)
                guard !Task.isCancelled, await self.notifyOnce(address, path, epoch: epoch) else { return }
            }
        }
    }

    private func streamPeriod(_ address: String, _ path: DBusObjectPath) -> Duration? {
        guard let device = devices[address], let layout = device.characteristics[path]?.layout,
            let interval = layout.notifyInterval
        else { return nil }
        if layout.uuid == .motionBandData { return .nanoseconds(Int64(1e9 / max(1, device.signals.motionRateHz))) }
        return layout.realTimeRate ? .nanoseconds(Int64(interval * 1e9)) : timings.duration(interval)
    }

    /// Produces and delivers the next value; false when the stream should end.
    private func notifyOnce(_ address: String, _ path: DBusObjectPath, epoch: Int) async -> Bool {
        guard let device = devices[address], device.linkEpoch == epoch,
            let characteristic = device.characteristics[path], characteristic.isNotifying,
            let payload = devices[address]?.signals.next(for: characteristic.layout.uuid, mtu: device.configuration.mtu)
        else { return false }
        await deliver(address, path, payload)
        return true
    }

    /// Sends one notification: over the AcquireNotify socket when one is held (as BlueZ does,
    /// without touching `Value`), else as `Value` PropertiesChanged for StartNotify sessions.
    func deliver(_ address: String, _ path: DBusObjectPath, _ payload: [UInt8]) async {
        guard let characteristic = devices[address]?.characteristics[path] else { return }
        if let socket = characteristic.notifySocket {
            switch socket.send(payload) {
            case .sent: countNotificationSent(by: address)
            case .dropped: counters.notificationsDropped += 1
            case .closed: await notifySocketClosed(address, path)
            }
            return
        }
        devices[address]?.characteristics[path]?.value = payload
        guard !characteristic.notifyClients.isEmpty else { return }
        countNotificationSent(by: address)
        // BlueZ announces every notification, even one repeating the last value.
        await setProperties(["Value": .bytes(payload)], of: Self.characteristicInterfaceName, at: path, announcingUnchanged: true)
    }
}
