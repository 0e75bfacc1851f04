import DBus
import Foundation
import GATT

// Connect, service resolution, disconnect, link loss and pairing.

extension BlueZSimulator {
    /// `Device1.Connect`: after the connection latency `Connected` turns true, after the
    /// resolution delay the GATT objects appear and `ServicesResolved` turns true; the call
    /// returns then, as BlueZ answers an LE Connect once services are resolved.
    func connect(_ address: String) async throws {
        guard let device = devices[address], device.exported else {
            throw DBusError(name: DBusError.unknownObject, message: "No such object path")
        }
        guard let adapterName = adapterName(of: device), let adapter = adapters[adapterName], adapter.powered else {
            throw BlueZError.notReady()
        }
        switch device.link {
        case .resolved: return
        case .connecting, .connected: throw BlueZError.inProgress()
        case .disconnected: break
        }
        devices[address]?.link = .connecting
        devices[address]?.linkEpoch += 1
        let epoch = device.linkEpoch + 1
        counters.connectAttempts[address, default: 0] += 1
        adapters[adapterName]?.attemptsInFlight += 1
        let inFlight = adapters[adapterName]?.attemptsInFlight ?? 1
        counters.maxConcurrentAttempts[adapterName] = max(counters.maxConcurrentAttempts[adapterName] ?? 0, inFlight)

        let latency = device.inRange ? timings.connectLatency : timings.connectTimeout
        try? await Task.sleep(for: timings.duration(latency))
        // A restart meanwhile reset the count: never go below zero.
        // (Read first: reading `adapters` inside the assignment would overlap its modify access.)
        let remaining = max(0, (adapters[adapterName]?.attemptsInFlight ?? 1) - 1)
        adapters[adapterName]?.attemptsInFlight = remaining

        func fail(_ text: String) -> DBusError {
            if devices[address]?.linkEpoch == epoch {
                devices[address]?.link = .disconnected
                devices[address]?.linkEpoch += 1
                devices[address]?.lastSeen = .now
            }
            return BlueZError.failed(text)
        }
        guard let current = devices[address], current.linkEpoch == epoch, current.link == .connecting else {
            throw BlueZError.failed(BlueZError.abortByLocal)
        }
        guard current.inRange else { throw fail(BlueZError.abortByLocal) }
        guard linksUp(on: current.adapterPath) < adapter.configuration.slots else {
            throw fail(BlueZError.concurrentConnectionLimit)
        }
        let probability = current.faults.connectFailureProbability ?? (current.faults.connectFailure == nil ? 0 : 1)
        if probability > 0, let draw = devices[address]?.random.unit(), draw < probability {
            throw fail(current.faults.connectFailure ?? BlueZError.abortByLocal)
        }

        devices[address]?.link = .connected
        await setProperties(["Connected": .boolean(true)], of: Self.deviceInterfaceName, at: current.path)
        startLinkLoss(address)

        let resolve = timings.resolveDelay + (current.faults.extraResolveDelay ?? 0)
        try? await Task.sleep(for: timings.duration(resolve))
        guard devices[address]?.linkEpoch == epoch, devices[address]?.link == .connected else {
            throw BlueZError.failed("Software caused connection abort")
        }
        await exportGATT(address)
        guard devices[address]?.linkEpoch == epoch, let resolved = devices[address] else {
            throw BlueZError.failed("Software caused connection abort")
        }
        devices[address]?.link = .resolved
        await setProperties(
            ["UUIDs": .stringArray(resolved.resolvedUUIDs), "ServicesResolved": .boolean(true)],
            of: Self.deviceInterfaceName, at: resolved.path)
    }

    func connectProfile(_ address: String, uuid: String) async throws {
        guard let device = devices[address] else { throw BlueZError.doesNotExist() }
        guard let wanted = BluetoothUUID(uuid), device.resolvedUUIDs.contains(wanted.description) else {
            throw BlueZError.doesNotExist()
        }
        try await connect(address)
    }

    /// `Device1.Disconnect`: NotConnected when there is no link; cancels an attempt in flight.
    func disconnect(_ address: String) async throws {
        guard let device = devices[address] else { throw BlueZError.doesNotExist() }
        guard device.link != .disconnected else { throw BlueZError.notConnected() }
        await dropLink(address, reason: .local, announce: true)
    }

    func pair(_ address: String) async throws {
        guard let device = devices[address] else { throw BlueZError.doesNotExist() }
        guard !device.paired else { throw BlueZError.alreadyExists() }
        if !device.link.isUp { try await connect(address) }
        try? await Task.sleep(for: timings.duration(timings.pairLatency))
        guard let paired = devices[address], paired.link.isUp else {
            throw BlueZError.failed("Authentication Failed")
        }
        devices[address]?.paired = true
        devices[address]?.bonded = true
        await setProperties(["Paired": .boolean(true), "Bonded": .boolean(true)], of: Self.deviceInterfaceName, at: paired.path)
    }

    /// Ends a link (or an attempt): sockets close, notify sessions end, the GATT objects go,
    /// then `ServicesResolved` and `Connected` turn false and `Disconnected(reason, message)` is
    /// emitted. With `announce` false (bluetoothd died) nothing is sent on the bus.
    func dropLink(_ address: String, reason: DisconnectReason, announce: Bool) async {
        guard var device = devices[address], device.link != .disconnected else { return }
        let wasUp = device.link.isUp
        device.link = .disconnected
        device.linkEpoch += 1
        device.lastSeen = .now
        device.linkLossTask?.cancel()
        device.linkLossTask = nil
        for path in Array(device.characteristics.keys) { device.characteristics[path]?.tearDown() }
        device.characteristics.removeAll()
        let gattPaths = device.gattPaths
        device.gattPaths.removeAll()
        devices[address] = device
        if reason == .timeout || reason == .remote { counters.linkDrops[address, default: 0] += 1 }
        guard announce, wasUp else { return }
        await setProperties(["ServicesResolved": .boolean(false)], of: Self.deviceInterfaceName, at: device.path)
        for path in gattPaths.reversed() { try? await connection?.unexport(path) }
        await setProperties(["Connected": .boolean(false)], of: Self.deviceInterfaceName, at: device.path)
        await emit(device.path, Self.deviceInterfaceName, "Disconnected", [.string(reason.dbusName), .string(reason.message)])
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

    func adapterName(of device: SimulatedDevice) -> String? {
        adapterNames.first { adapters[$0]?.path == device.adapterPath }
    }

    /// Links up (or resolving) on an adapter: the controller slots in use.
    func linksUp(on adapterPath: DBusObjectPath) -> Int {
        devices.values.filter { $0.adapterPath == adapterPath && $0.link.isUp }.count
    }
}
