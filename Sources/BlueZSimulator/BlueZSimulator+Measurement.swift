import DBus
import Foundation
import GATT

// Measurement devices (blood-pressure cuffs, weight scales): they sleep and wake to measure,
// keep their measurements until a client took them, indicate them once indications are enabled
// and then disconnect themselves; their indications and clock want an encrypted link, which
// bluetoothd 5.66 gets by pairing on the spot; their clock runs wrong until a client sets it.

extension BlueZSimulator {
    // MARK: - Waking and sleeping

    /// Wakes the measurement device at `address` now: it takes its measurements (`records`), and
    /// one with a wake schedule advertises for its awake window (a `Connect` waiting for it goes
    /// on). An awake device measures again and its window starts anew. False when there is no
    /// measurement device at `address`.
    /// `awakeFor` replaces the schedule's awake window for this wake (seconds, scaled as the
    /// schedule's are): a test that watches a whole window go by without waiting long.
    @discardableResult
    public func wake(address: String, awakeFor: Double? = nil) async -> Bool {
        guard devices[address]?.measurement != nil else { return false }
        wakeDevice(address, awakeFor: awakeFor)
        return true
    }

    /// Returns once the measurement device at `address` sleeps (at once when it does): its
    /// awake window ended, or it hung up after its burst. Throws `CancellationError` when the
    /// waiting task is cancelled, so a timeout around the wait ends it.
    public func waitUntilAsleep(address: String) async throws {
        guard devices[address]?.measurement?.awake == true else { return }
        let id = nextSleepWaiter
        nextSleepWaiter += 1
        try await park({ sleepWaiters[address, default: [:]][id] = $0 }, unpark: { await $0.cancelSleepWaiter(address, id) })
    }

    private func cancelSleepWaiter(_ address: String, _ id: Int) {
        sleepWaiters[address]?.removeValue(forKey: id)?.resume(throwing: CancellationError())
    }

    /// The control interface's `Wake`: one device, or every measurement device (`address` nil).
    func wakeForControl(_ address: String?) async throws {
        let targets = try deviceTargets(address)
        if let address, let only = targets.first, devices[only]?.measurement == nil {
            throw DBusError(name: DBusError.invalidArgs, message: "\(address) is not a measurement device")
        }
        for target in targets where devices[target]?.measurement != nil { wakeDevice(target) }
    }

    /// Whether the device is awake (nil when there is no such device); for tests.
    public func isAwake(address: String) -> Bool? { devices[address]?.isAwake }

    /// Every measurement the device took since start, in order, encoded as it indicates them.
    public func takenRecords(of address: String) -> [[UInt8]] { devices[address]?.measurement?.taken ?? [] }

    /// The measurements the device still keeps for a client.
    public func queuedRecordCount(of address: String) -> Int { devices[address]?.measurement?.queue.count ?? 0 }

    private func wakeDevice(_ address: String, awakeFor: Double? = nil) {
        guard let device = devices[address], device.measurement != nil else { return }
        counters.wakeUps[address, default: 0] += 1
        takeMeasurements(address)
        if let schedule = device.configuration.wake {
            devices[address]?.measurement?.awake = true
            devices[address]?.measurement?.windowTask?.cancel()
            let window = timings.duration(min(awakeFor ?? schedule.awake, Self.longestSleep))
            devices[address]?.measurement?.windowTask = Task {
                try? await Task.sleep(for: window)
                guard !Task.isCancelled else { return }
                await self.awakeWindowEnded(address)
            }
            releaseWakeWaiters(address)
        }
        startRecordBurst(address)
    }

    /// The device's measurements of this wake, stamped with its own clock's reading.
    private func takeMeasurements(_ address: String) {
        guard let device = devices[address], let state = device.measurement else { return }
        let time = state.clock.now(timeScale: timings.timeScale)
        for _ in 0..<device.configuration.records {
            let record: [UInt8]
            switch device.configuration.kind {
            case .bloodPressureCuff: record = devices[address]?.signals.bloodPressure(at: time) ?? []
            case .weightScale: record = devices[address]?.signals.weight(at: time) ?? []
            case .heartRateStrap, .watch, .motionBand: return
            }
            devices[address]?.measurement?.queue.append(record)
            devices[address]?.measurement?.taken.append(record)
            counters.recordsTaken[address, default: 0] += 1
        }
    }

    /// The awake window is over: a device nobody connected to goes back to sleep, its records
    /// kept; one whose client has not enabled indications hangs up first. A burst under way ends
    /// the link itself.
    private func awakeWindowEnded(_ address: String) async {
        guard let device = devices[address], device.configuration.wake != nil, device.measurement?.burstTask == nil else { return }
        if device.link.isUp {
            await dropLink(address, reason: .remote, announce: true)
        } else if device.link == .disconnected {
            fallAsleep(address)
        }
    }

    /// A device with a wake schedule sleeps: it stops advertising until its next wake.
    func fallAsleep(_ address: String) {
        guard devices[address]?.configuration.wake != nil else { return }
        devices[address]?.measurement?.awake = false
        devices[address]?.measurement?.windowTask?.cancel()
        devices[address]?.measurement?.windowTask = nil
        for waiter in (sleepWaiters.removeValue(forKey: address) ?? [:]).values { waiter.resume() }
    }

    /// Wakes the device `firstWakeAfter` seconds after start and then every `awake + asleep`.
    func runWakeSchedule(_ address: String) async {
        guard let schedule = devices[address]?.configuration.wake else { return }
        try? await Task.sleep(for: timings.duration(min(schedule.firstWakeAfter, Self.longestSleep)))
        while !Task.isCancelled {
            wakeDevice(address)
            try? await Task.sleep(for: timings.duration(min(schedule.awake + schedule.asleep, Self.longestSleep)))
        }
    }

    /// Simulated seconds no schedule sleeps beyond (a year): "never" in a test, and far from the
    /// overflow of a nanosecond `Duration`.
    static let longestSleep: Double = 3e7

    // MARK: - A Connect waiting for the device

    /// Returns once the device wakes, its attempt ends (`Disconnect`), or `timeout` passed.
    func waitUntilAwake(_ address: String, timeout: Duration) async {
        let id = nextWakeWaiter
        nextWakeWaiter += 1
        let timer = Task {
            try? await Task.sleep(for: timeout)
            self.releaseWakeWaiter(address, id)
        }
        await withCheckedContinuation(isolation: self) { (continuation: CheckedContinuation<Void, Never>) in
            wakeWaiters[address, default: [:]][id] = continuation
        }
        timer.cancel()
    }

    private func releaseWakeWaiter(_ address: String, _ id: Int) {
        wakeWaiters[address]?.removeValue(forKey: id)?.resume()
    }

    /// Lets every `Connect` waiting for the device go on (it woke, or the attempt was cancelled).
    func releaseWakeWaiters(_ address: String) {
        guard let waiting = wakeWaiters.removeValue(forKey: address) else { return }
        for continuation in waiting.values { continuation.resume() }
    }

    // MARK: - Encryption on demand

    /// Makes sure the link is encrypted before a request the device answers only on an encrypted
    /// link, as bluetoothd 5.66 does when the device answers Insufficient Authentication:
    /// `bt_att` raises the ATT socket's security itself (src/shared/att.c `handle_error_rsp` →
    /// `change_security`: BT_SECURITY medium) and sends the request again once the kernel has
    /// paired; a bonded device's link is encrypted from the start. A device that pairs by passkey
    /// has the default agent asked (nobody called `Pair`: src/device.c `new_auth` →
    /// `agent_get(NULL)`). When the pairing fails, the request fails with the device's answer as
    /// bluetoothd words it (`create_gatt_dbus_error`: NotPermitted "Not paired").
    func ensureEncrypted(_ address: String) async throws {
        guard let device = devices[address], device.link.isUp, let adapter = device.linkAdapter else {
            throw BlueZError.failed("Not connected")
        }
        guard !device.linkEncrypted else { return }
        let elevation: Task<Bool, Never>
        if let running = device.securityElevation {
            elevation = running
        } else {
            let epoch = device.linkEpoch
            elevation = Task { await self.pairToEncrypt(address, adapter: adapter, epoch: epoch) }
            devices[address]?.securityElevation = elevation
        }
        let encrypted = await elevation.value
        if devices[address]?.securityElevation == elevation { devices[address]?.securityElevation = nil }
        guard encrypted, devices[address]?.linkEncrypted == true else {
            throw BlueZError.attError(Self.insufficientAuthentication)
        }
    }

    /// ATT error 0x05: what the device answers on a link not encrypted.
    static let insufficientAuthentication: UInt8 = 0x05

    /// The SMP pairing the kernel runs for a raised security level: Just Works asks nobody, a
    /// passkey the default agent. A success bonds (the kernel pairs bondable: bluetoothd keeps
    /// `Pairable` on) and encrypts the link; a failure leaves the device unpaired and temporary
    /// again (src/device.c `device_bonding_complete`).
    private func pairToEncrypt(_ address: String, adapter: String, epoch: Int) async -> Bool {
        guard let device = devices[address], let object = device.objects[adapter] else { return false }
        if device.configuration.pairing == .passkey {
            do {
                try await enterPasskey(device.configuration.passkey, for: object.path, caller: nil)
            } catch {
                pairingFailed(address, adapter: adapter)
                return false
            }
        }
        try? await Task.sleep(for: timings.duration(timings.pairLatency))
        guard devices[address]?.linkEpoch == epoch, devices[address]?.link.isUp == true else {
            counters.pairingFailures += 1
            pairingFailed(address, adapter: adapter)
            return false
        }
        counters.pairings[address, default: 0] += 1
        keep(address, on: adapter)
        devices[address]?.linkEncrypted = true
        devices[address]?.objects[adapter]?.paired = true
        devices[address]?.objects[adapter]?.bonded = true
        await setProperties(["Paired": .boolean(true), "Bonded": .boolean(true)], of: Self.deviceInterfaceName, at: object.path)
        return true
    }

    private func pairingFailed(_ address: String, adapter: String) {
        guard devices[address]?.objects[adapter]?.paired == false else { return }
        devices[address]?.objects[adapter]?.temporary = true
    }

    // MARK: - Sessions that outlived the link

    /// bluetoothd 5.66 keeps a characteristic's StartNotify sessions when the link ends (the
    /// attribute stays with the cache) and, when the device is connected again, enables them
    /// again itself (src/gatt-client.c `btd_gatt_client_connected` → `register_notify`: "Re-enable
    /// notifications for any pre-registered notification sessions"). The simulator plays that for
    /// measurement devices: `notifyResumeDelay` after `Connected`, each kept session's CCC is
    /// written again (encrypting the link first if the device wants it), and a measurement device
    /// indicates its queue.
    func scheduleNotifyResume(_ address: String, epoch: Int) {
        guard let device = devices[address], device.configuration.kind.isMeasurementDevice,
            device.characteristics.values.contains(where: { !$0.notifyClients.isEmpty })
        else { return }
        let delay = timings.duration(timings.notifyResumeDelay)
        devices[address]?.measurement?.resumeTask?.cancel()
        devices[address]?.measurement?.resumeTask = Task {
            try? await Task.sleep(for: delay)
            guard !Task.isCancelled else { return }
            await self.resumeNotifySessions(address, epoch: epoch)
        }
    }

    private func resumeNotifySessions(_ address: String, epoch: Int) async {
        guard let device = devices[address], device.linkEpoch == epoch, device.link.isUp, device.gattAdapter == device.linkAdapter
        else { return }
        let kept = device.characteristics.filter { !$0.value.notifyClients.isEmpty && !$0.value.subscribedOnLink }
        for (path, characteristic) in kept.sorted(by: { $0.key.rawValue < $1.key.rawValue }) {
            if characteristic.layout.encryptedSubscribe {
                do {
                    try await ensureEncrypted(address)
                } catch {
                    // `register_notify_cb` with an error drops the session.
                    guard devices[address]?.linkEpoch == epoch else { return }
                    devices[address]?.characteristics[path]?.notifyClients.removeAll()
                    await notifySessionEnded(address, path)
                    continue
                }
            }
            guard devices[address]?.linkEpoch == epoch, devices[address]?.characteristics[path]?.notifyClients.isEmpty == false
            else { continue }
            devices[address]?.characteristics[path]?.subscribedOnLink = true
            startStream(address, path)
        }
        startRecordBurst(address)
    }

    // MARK: - Indicating the queue

    /// The path of the device's measurement characteristic (Blood Pressure or Weight Measurement)
    /// on the link of now.
    private func measurementPath(_ device: SimulatedDevice) -> DBusObjectPath? {
        device.characteristics.first { $0.value.layout.uuid == .bloodPressureMeasurement || $0.value.layout.uuid == .weightMeasurement }?
            .key
    }

    /// Whether an indication sent now reaches the bus: bluetoothd enabled the CCC on this link for
    /// a StartNotify session, or an AcquireNotify socket is open.
    private func canDeliver(_ characteristic: SimulatedCharacteristic) -> Bool {
        if let socket = characteristic.notifySocket { return !socket.peerHasClosed }
        return characteristic.subscribedOnLink && !characteristic.notifyClients.isEmpty
    }

    /// Starts indicating the queue when the link is up, indications are enabled and no burst runs.
    func startRecordBurst(_ address: String) {
        guard let device = devices[address], let state = device.measurement, state.burstTask == nil, device.link.isUp,
            device.gattAdapter == device.linkAdapter, let path = measurementPath(device),
            let characteristic = device.characteristics[path], canDeliver(characteristic)
        else { return }
        let epoch = device.linkEpoch
        devices[address]?.measurement?.burstEpoch = epoch
        devices[address]?.measurement?.burstTask = Task { await self.indicateQueue(address, path, epoch: epoch) }
    }

    /// Indicates every queued record in order, `recordInterval` apart (each indication waits for
    /// the confirmation of the last). A record leaves the queue when it is sent on the bus, so a
    /// link that ends mid-burst leaves the rest for the next one. A device with a wake schedule
    /// then disconnects itself `deviceDisconnectDelay` after its last record and sleeps.
    private func indicateQueue(_ address: String, _ path: DBusObjectPath, epoch: Int) async {
        var sentThisBurst = 0
        var emptied = false
        while !Task.isCancelled {
            try? await Task.sleep(for: timings.duration(timings.recordInterval))
            guard !Task.isCancelled, let device = devices[address], device.linkEpoch == epoch, device.link.isUp,
                let characteristic = device.characteristics[path], canDeliver(characteristic)
            else { break }
            guard let record = device.measurement?.queue.first else {
                emptied = true
                break
            }
            guard send(record, address, path, characteristic) else { break }
            devices[address]?.measurement?.queue.removeFirst()
            counters.recordsDelivered[address, default: 0] += 1
            await setValueAnnounced(record, path, characteristic)
            sentThisBurst += 1
            if let limit = device.faults.dropLinkAfterRecords, sentThisBurst >= limit, devices[address]?.linkEpoch == epoch {
                endBurst(address, epoch: epoch)
                await dropLink(address, reason: .timeout, announce: true)
                return
            }
        }
        endBurst(address, epoch: epoch)
        guard emptied, devices[address]?.configuration.wake != nil else { return }
        try? await Task.sleep(for: timings.duration(timings.deviceDisconnectDelay))
        guard devices[address]?.linkEpoch == epoch, devices[address]?.link.isUp == true else { return }
        if devices[address]?.measurement?.queue.isEmpty == false {
            // Measured again meanwhile: those go first.
            startRecordBurst(address)
        } else {
            await dropLink(address, reason: .remote, announce: true)
        }
    }

    private func endBurst(_ address: String, epoch: Int) {
        guard devices[address]?.measurement?.burstEpoch == epoch else { return }
        devices[address]?.measurement?.burstTask = nil
        devices[address]?.measurement?.burstEpoch = nil
    }

    /// Hands one record to the bus synchronously (no suspension between taking it off the queue
    /// and this), so a link ending meanwhile cannot make it both sent and kept. An AcquireNotify
    /// socket that does not take it leaves it queued.
    private func send(_ record: [UInt8], _ address: String, _ path: DBusObjectPath, _ characteristic: SimulatedCharacteristic)
        -> Bool
    {
        guard let socket = characteristic.notifySocket else {
            countNotificationSent(by: address)
            return true
        }
        switch socket.send(record) {
        case .sent:
            countNotificationSent(by: address)
            return true
        case .dropped, .closed:
            return false
        }
    }

    /// A StartNotify session's indication: bluetoothd stores the value and announces it, even
    /// when it repeats the last (`notify_cb` in src/gatt-client.c).
    private func setValueAnnounced(_ record: [UInt8], _ path: DBusObjectPath, _ characteristic: SimulatedCharacteristic) async {
        guard characteristic.notifySocket == nil else { return }
        await setProperties(["Value": .bytes(record)], of: Self.characteristicInterfaceName, at: path, announcingUnchanged: true)
    }

    // MARK: - The device's clock

    /// The Current Time a read returns now.
    func currentTimeValue(_ address: String) -> [UInt8]? {
        devices[address]?.measurement?.clock.currentTime(timeScale: timings.timeScale).encode()
    }

    /// A write request to Current Time: ten bytes that decode to a whole date set the clock;
    /// another length is refused with Invalid Attribute Value Length (0x0d), fields out of range or
    /// an unknown date with the Current Time Service's own "Data field ignored" (0x80), as
    /// Zephyr's CTS server answers a value it cannot apply (subsys/bluetooth/services/cts.c
    /// `write_ct`). bluetoothd 5.66 words them `InvalidArguments` "Invalid Length" and `Failed`
    /// "Operation failed with ATT error: 0x80" (`create_gatt_dbus_error`).
    func writeCurrentTime(_ address: String, _ path: DBusObjectPath, _ value: [UInt8]) throws {
        guard value.count == 10 else { throw BlueZError.attError(Self.invalidAttributeValueLength) }
        guard let written = try? CurrentTime.decode(value), devices[address]?.measurement?.clock.set(to: written) == true else {
            throw BlueZError.attError(Self.dataFieldIgnored)
        }
        counters.clockWrites[address, default: 0] += 1
        counters.lastClockWritten[address] = value
        devices[address]?.characteristics[path]?.value = value
    }

    static let invalidAttributeValueLength: UInt8 = 0x0d
    /// Current Time Service 1.1, application error 0x80: the server did not apply the value.
    static let dataFieldIgnored: UInt8 = 0x80
}
