import DBus
import Foundation
import GATT

// Connect, service resolution, disconnect, link loss and pairing.

extension BlueZSimulator {
    /// `Device1.Connect` on `adapter`'s object: after the connection latency `Connected` turns
    /// true, after the resolution delay the GATT objects appear (or the cached ones are used
    /// again) and `ServicesResolved` turns true; the call returns then, as BlueZ answers an LE
    /// Connect once services are resolved.
    ///
    /// The device is one peripheral: while it has a link (or an attempt) through another
    /// adapter it does not advertise, so this adapter's attempt finds nobody and the controller
    /// gives up after the connection timeout, which BlueZ reports as
    /// `le-connection-abort-by-local` (the kernel cancels the LE Create Connection: ECONNABORTED,
    /// `btd_error_le_conn_from_errno` in `src/error.c`).
    func connect(_ address: String, adapter adapterName: String) async throws {
        guard let device = devices[address], let object = device.objects[adapterName], object.exported else {
            throw DBusError(name: DBusError.unknownObject, message: "No such object path")
        }
        guard let adapter = adapters[adapterName], adapter.powered else { throw BlueZError.notReady() }
        if device.linkLeftBehind, device.linkAdapter == adapterName {
            // bluetoothd answers a Connect on an LE link it already has at once, without an ATT
            // bearer (`dev_connect` in src/device.c: `if (dev->le_state.connected) return …`),
            // so the link still ends when the kernel closes it.
            return
        }
        // dev_connect makes the device permanent before it tries (`btd_device_set_temporary(dev,
        // false)`), whether or not the attempt succeeds: from now on it is remembered on this
        // adapter, like a bonded one.
        keep(address, on: adapterName)
        if device.link != .disconnected, device.linkAdapter != adapterName {
            try await attemptToBusyPeripheral(address, adapter: adapterName)
        }
        switch device.link {
        case .resolved: return
        case .connecting, .connected: throw BlueZError.inProgress()
        case .disconnected: break
        }
        if !claimInWorld(address) {
            // Another gateway of the shared world holds the device's link (or is making it): it
            // does not advertise, as when another adapter of this gateway holds it.
            try await attemptToBusyPeripheral(address, adapter: adapterName)
        }
        devices[address]?.link = .connecting
        devices[address]?.linkAdapter = adapterName
        devices[address]?.linkEpoch += 1
        let epoch = device.linkEpoch + 1
        counters.connectAttempts[address, default: 0] += 1
        if device.inRange, !device.isAwake {
            // Linux connects an LE device by passive scanning (`hci_connect_le_scan` in
            // net/bluetooth/hci_conn.c puts it on `pend_le_conns`): the controller's LE Create
            // Connection is sent only once the device advertises, so until then the attempt
            // takes no part of it and is not counted in flight. It ends when the socket's
            // connect timeout passes (`pendingConnectTimeout`).
            counters.pendingConnects[adapterName, default: 0] += 1
            await waitUntilAwake(address, timeout: timings.duration(timings.pendingConnectTimeout))
            let stillPending = max(0, (counters.pendingConnects[adapterName] ?? 1) - 1)
            counters.pendingConnects[adapterName] = stillPending
            guard devices[address]?.linkEpoch == epoch, devices[address]?.link == .connecting else {
                throw BlueZError.failed(BlueZError.abortByLocal)
            }
            guard devices[address]?.isAwake == true else {
                devices[address]?.link = .disconnected
                devices[address]?.linkAdapter = nil
                devices[address]?.linkEpoch += 1
                releaseInWorld(address)
                throw BlueZError.failed(BlueZError.abortByLocal)
            }
        }
        beginAttempt(on: adapterName)

        let latency = device.inRange ? timings.connectLatency : timings.connectTimeout
        try? await Task.sleep(for: timings.duration(latency))
        endAttempt(on: adapterName)

        func fail(_ text: String) -> DBusError {
            if devices[address]?.linkEpoch == epoch {
                devices[address]?.link = .disconnected
                devices[address]?.linkAdapter = nil
                devices[address]?.linkEpoch += 1
                devices[address]?.objects[adapterName]?.lastSeen = .now
                releaseInWorld(address)
            }
            return BlueZError.failed(text)
        }
        guard let current = devices[address], current.linkEpoch == epoch, current.link == .connecting else {
            throw BlueZError.failed(BlueZError.abortByLocal)
        }
        guard current.inRange else { throw fail(BlueZError.abortByLocal) }
        guard linksUp(on: adapterName) < adapter.configuration.slots else {
            throw fail(BlueZError.concurrentConnectionLimit)
        }
        let probability = current.faults.connectFailureProbability ?? (current.faults.connectFailure == nil ? 0 : 1)
        if probability > 0, let draw = devices[address]?.random.unit(), draw < probability {
            throw fail(current.faults.connectFailure ?? BlueZError.abortByLocal)
        }

        devices[address]?.link = .connected
        linkUpInWorld(address)
        // A paired device is connected at security medium: the link encrypts with the bond's key,
        // no agent asked (`device_connect_le` in src/device.c).
        // (Read first: reading `devices` inside the assignment would overlap its modify access.)
        let pairedHere = devices[address]?.objects[adapterName]?.paired == true
        devices[address]?.linkEncrypted = pairedHere
        await setProperties(["Connected": .boolean(true)], of: Self.deviceInterfaceName, at: object.path)
        startLinkLoss(address)
        scheduleNotifyResume(address, epoch: epoch)

        let resolve = timings.resolveDelay + (current.faults.extraResolveDelay ?? 0)
        try? await Task.sleep(for: timings.duration(resolve))
        guard devices[address]?.linkEpoch == epoch, devices[address]?.link == .connected else {
            throw BlueZError.failed("Software caused connection abort")
        }
        await exportGATT(address, on: adapterName)
        guard devices[address]?.linkEpoch == epoch, let resolved = devices[address] else {
            throw BlueZError.failed("Software caused connection abort")
        }
        devices[address]?.link = .resolved
        await setProperties(
            ["UUIDs": .stringArray(resolved.resolvedUUIDs), "ServicesResolved": .boolean(true)],
            of: Self.deviceInterfaceName, at: object.path)
    }

    /// An attempt through `adapter` while the peripheral is linked (or being linked) through
    /// another adapter, or by another gateway of a shared world: nobody answers, and the attempt
    /// ends after the connection timeout.
    private func attemptToBusyPeripheral(_ address: String, adapter: String) async throws -> Never {
        counters.connectAttempts[address, default: 0] += 1
        beginAttempt(on: adapter)
        try? await Task.sleep(for: timings.duration(timings.connectTimeout))
        endAttempt(on: adapter)
        throw BlueZError.failed(BlueZError.abortByLocal)
    }

    private func beginAttempt(on adapter: String) {
        adapters[adapter]?.attemptsInFlight += 1
        let inFlight = adapters[adapter]?.attemptsInFlight ?? 1
        counters.maxConcurrentAttempts[adapter] = max(counters.maxConcurrentAttempts[adapter] ?? 0, inFlight)
    }

    private func endAttempt(on adapter: String) {
        // A restart meanwhile reset the count: never go below zero.
        // (Read first: reading `adapters` inside the assignment would overlap its modify access.)
        let remaining = max(0, (adapters[adapter]?.attemptsInFlight ?? 1) - 1)
        adapters[adapter]?.attemptsInFlight = remaining
    }

    func connectProfile(_ address: String, adapter: String, uuid: String) async throws {
        guard let device = devices[address] else { throw BlueZError.doesNotExist() }
        guard let wanted = BluetoothUUID(uuid), device.resolvedUUIDs.contains(wanted.description) else {
            throw BlueZError.doesNotExist()
        }
        try await connect(address, adapter: adapter)
    }

    /// `Device1.Disconnect` on `adapter`'s object: NotConnected when there is no link through
    /// it; cancels an attempt in flight. Like bluetoothd, it answers once the link is down; a
    /// `disconnect-delay` fault makes that take its seconds.
    func disconnect(_ address: String, adapter: String) async throws {
        guard let device = devices[address] else { throw BlueZError.doesNotExist() }
        guard device.link != .disconnected, device.linkAdapter == adapter else { throw BlueZError.notConnected() }
        if let delay = device.faults.disconnectDelay {
            counters.disconnectsPending += 1
            try? await Task.sleep(for: timings.duration(delay))
            counters.disconnectsPending -= 1
            // The link may have gone meanwhile (bluetoothd answers all the same).
            guard devices[address]?.linkAdapter == adapter else { return }
        }
        await dropLink(address, reason: .local, announce: true)
    }

    /// `Device1.Pair` on `adapter`'s object: connects if needed, runs the device's pairing
    /// (`PairingMethod`: a passkey one asks `caller`'s agent, else the default agent) and bonds
    /// with that adapter only.
    func pair(_ address: String, adapter: String, caller: String? = nil) async throws {
        guard let device = devices[address], let object = device.objects[adapter] else { throw BlueZError.doesNotExist() }
        guard !object.paired else { throw BlueZError.alreadyExists() }
        keep(address, on: adapter)
        // bluetoothd stops the adapter's discovery while it pairs, and starts it again a while
        // after (`SimulatedAdapter.pairingsInFlight`).
        adapters[adapter]?.pairingsInFlight += 1
        defer { pairingEnded(on: adapter) }
        if !device.isLinked(through: adapter) { try await connect(address, adapter: adapter) }
        if device.configuration.pairing == .passkey {
            try await enterPasskey(device.configuration.passkey, for: object.path, caller: caller)
        }
        try? await Task.sleep(for: timings.duration(timings.pairLatency))
        guard let paired = devices[address], paired.isLinked(through: adapter) else {
            counters.pairingFailures += 1
            throw BlueZError.authenticationCanceled()
        }
        counters.pairings[address, default: 0] += 1
        devices[address]?.linkEncrypted = true
        devices[address]?.objects[adapter]?.paired = true
        devices[address]?.objects[adapter]?.bonded = true
        await setProperties(["Paired": .boolean(true), "Bonded": .boolean(true)], of: Self.deviceInterfaceName, at: object.path)
    }

    private func pairingEnded(on adapter: String) {
        guard let pairings = adapters[adapter]?.pairingsInFlight, pairings > 0 else { return }
        adapters[adapter]?.pairingsInFlight = pairings - 1
        if pairings == 1 { adapters[adapter]?.discoveryResumesAt = .now + timings.duration(timings.discoveryResumeDelay) }
    }

    /// Ends a link (or an attempt): sockets close, notify sessions end, the GATT objects go
    /// unless the cache keeps them (`[GATT] Cache`), then `ServicesResolved` and `Connected`
    /// turn false and `Disconnected(reason, message)` is emitted — not when `reason` is nil,
    /// as BlueZ 5.66, which has no such signal, reports a link's end. With `announce` false
    /// (bluetoothd died) nothing is sent on the bus.
    func dropLink(_ address: String, reason: DisconnectReason?, announce: Bool) async {
        guard var device = devices[address], device.link != .disconnected, let adapter = device.linkAdapter else { return }
        let wasUp = device.link.isUp
        let wasConnecting = device.link == .connecting
        let path = device.objects[adapter]?.path
        device.link = .disconnected
        releaseInWorld(address)
        device.linkEncrypted = false
        device.securityElevation = nil
        device.measurement?.burstTask?.cancel()
        device.measurement?.burstTask = nil
        device.measurement?.burstEpoch = nil
        device.linkAdapter = nil
        device.linkEpoch += 1
        device.linkLeftBehind = false
        device.objects[adapter]?.lastSeen = .now
        device.linkLossTask?.cancel()
        device.linkLossTask = nil
        // Sessions end with the link; cached characteristics say so (BlueZ's gatt-client ends
        // every notify session when the ATT bearer goes). A measurement device's StartNotify
        // sessions stay while its attributes are cached, to be enabled again on the next link
        // (`scheduleNotifyResume`); its AcquireNotify sockets hang up all the same.
        let keepsSessions = device.configuration.kind.isMeasurementDevice && keepsGATT(device, on: adapter)
        let sessionsEnded = device.characteristics.values.filter {
            keepsSessions ? $0.notifySocket != nil || $0.writeSocket != nil : $0.isNotifying || $0.writeSocket != nil
        }.map(\.path)
        for characteristic in Array(device.characteristics.keys) {
            if keepsSessions {
                device.characteristics[characteristic]?.suspendForLinkLoss()
            } else {
                device.characteristics[characteristic]?.tearDown()
            }
        }
        var removedGATT: [DBusObjectPath] = []
        if !keepsGATT(device, on: adapter) {
            removedGATT = device.gattPaths
            device.gattPaths.removeAll()
            device.characteristics.removeAll()
            device.gattAdapter = nil
        }
        devices[address] = device
        if reason == .timeout || reason == .remote { counters.linkDrops[address, default: 0] += 1 }
        // A measurement device that sleeps goes back to sleep when its link ends; a Connect
        // waiting for it to wake is over.
        if wasUp { fallAsleep(address) }
        if wasConnecting { releaseWakeWaiters(address) }
        guard announce, wasUp, let path else { return }
        await setProperties(["ServicesResolved": .boolean(false)], of: Self.deviceInterfaceName, at: path)
        for gattPath in removedGATT.reversed() { try? await connection?.unexport(gattPath) }
        if removedGATT.isEmpty {
            for characteristic in sessionsEnded {
                await setProperties(
                    ["Notifying": .boolean(false), "NotifyAcquired": .boolean(false), "WriteAcquired": .boolean(false)],
                    of: Self.characteristicInterfaceName, at: characteristic)
            }
        }
        await setProperties(["Connected": .boolean(false)], of: Self.deviceInterfaceName, at: path)
        guard let reason else { return }
        await emit(path, Self.deviceInterfaceName, "Disconnected", [.string(reason.dbusName), .string(reason.message)])
    }

    /// Makes `adapter`'s object for the device permanent, unless its address is private.
    func keep(_ address: String, on adapter: String) {
        guard devices[address]?.hasPrivateAddress == false else { return }
        devices[address]?.objects[adapter]?.temporary = false
    }

    /// Whether the device's attribute cache outlives a link through `adapter`: `[GATT] Cache`
    /// (`gatt_cache_is_enabled` in BlueZ's `src/device.c`: `always` for every device, `yes`
    /// for paired ones, `no` never).
    func keepsGATT(_ device: SimulatedDevice, on adapter: String) -> Bool {
        switch settings.cache {
        case .always: true
        case .yes: device.objects[adapter]?.paired == true
        case .no: false
        }
    }

    /// Schedules the next spontaneous drop when the device has a link-loss fault.
    func startLinkLoss(_ address: String) {
        guard let device = devices[address], device.link.isUp else { return }
        device.linkLossTask?.cancel()
        devices[address]?.linkLossTask = nil
        guard let mean = device.faults.linkLossMeanSeconds, mean > 0,
            let delay = devices[address]?.random.exponential(mean: mean)
        else { return }
        let epoch = device.linkEpoch
        let duration = timings.duration(delay)
        devices[address]?.linkLossTask = Task {
            try? await Task.sleep(for: duration)
            guard !Task.isCancelled, self.devices[address]?.linkEpoch == epoch else { return }
            await self.dropLink(address, reason: .timeout, announce: true)
        }
    }

    /// Links up (or resolving) on an adapter: the controller slots in use.
    func linksUp(on adapter: String) -> Int {
        devices.values.filter { $0.linkAdapter == adapter && $0.link.isUp }.count
    }
}
