import DBus
import GATT

// Fault injection: standing faults, immediate faults, adapter power and bluetoothd restarts.

extension BlueZSimulator {
    /// Applies a fault now. Throws `InvalidArgs` for an unknown device or adapter.
    public func apply(_ fault: FaultCommand) async throws {
        let targets = try deviceTargets(fault.device)
        switch fault.kind {
        case .connectFailure:
            let text = fault.error ?? BlueZError.abortByLocal
            let probability = max(0, min(1, fault.probability ?? 1))
            updateFaults(fleetWide: fault.device == nil, targets) {
                $0.connectFailure = text
                $0.connectFailureProbability = probability
            }
        case .linkLoss:
            let mean = fault.seconds.flatMap { $0 > 0 ? $0 : nil }
            updateFaults(fleetWide: fault.device == nil, targets) { $0.linkLossMeanSeconds = mean }
            for address in targets { startLinkLoss(address) }
        case .dropLink:
            for address in targets { await dropLink(address, reason: .timeout, announce: true) }
        case .resolveDelay:
            updateFaults(fleetWide: fault.device == nil, targets) { $0.extraResolveDelay = fault.seconds }
        case .disconnectDelay:
            let delay = fault.seconds.flatMap { $0 > 0 ? $0 : nil }
            updateFaults(fleetWide: fault.device == nil, targets) { $0.disconnectDelay = delay }
        case .missingService:
            let uuid = fault.uuid.flatMap { $0.isEmpty ? nil : $0 }
            updateFaults(fleetWide: fault.device == nil, targets) { $0.missingService = uuid }
        case .outOfRange:
            for address in targets {
                devices[address]?.inRange = false
                await dropLink(address, reason: .timeout, announce: true)
            }
        case .inRange:
            for address in targets { devices[address]?.inRange = true }
        case .stallDiscovery:
            for name in try adapterTargets(fault.adapter) { adapters[name]?.discoveryStalled = true }
        case .rejectWrites:
            let uuid = fault.uuid.flatMap { $0.isEmpty ? nil : $0 }
            if let uuid, BluetoothUUID(uuid) == nil {
                throw DBusError(name: DBusError.invalidArgs, message: "\(uuid) is not a Bluetooth UUID")
            }
            let code = fault.attError ?? Self.refusedWriteDefaultATTError
            // 0 is success in ATT: a refusal needs a real error code.
            guard (1...0xff).contains(code) else {
                throw DBusError(name: DBusError.invalidArgs, message: "ATT error \(code) is not 1…255")
            }
            updateFaults(fleetWide: fault.device == nil, targets) {
                $0.rejectWritesUUID = uuid
                $0.rejectWritesATTError = uuid == nil ? nil : code
            }
        case .adapterPower:
            for name in try adapterTargets(fault.adapter) { await setAdapterPowered(name, fault.powered ?? false) }
        case .restart:
            let delay = fault.seconds ?? timings.restartDelay
            // Detached from the caller: the control call returns while bluetoothd is away.
            let killed = fault.killed ?? false
            backgroundTasks.append(Task { await self.restart(after: delay, killed: killed) })
        case .clear:
            if fault.device == nil {
                fleetFaults = FaultSettings()
                // A stall is the adapters' own fault: a fleet-wide clear lets their discovery hear again.
                for name in try adapterTargets(fault.adapter) { adapters[name]?.discoveryStalled = false }
            }
            for address in targets {
                devices[address]?.faults = fault.device == nil ? FaultSettings() : FaultSettings().overriding(fleetFaults)
                devices[address]?.linkLossTask?.cancel()
                devices[address]?.linkLossTask = nil
            }
        }
    }

    /// What a `reject-writes` fault answers with when it names no code: the 0xfc a strap refused
    /// writes with on the real stack.
    public static let refusedWriteDefaultATTError = 0xfc

    private func updateFaults(fleetWide: Bool, _ targets: [String], _ change: (inout FaultSettings) -> Void) {
        if fleetWide { change(&fleetFaults) }
        for address in targets {
            guard var faults = devices[address]?.faults else { continue }
            change(&faults)
            devices[address]?.faults = faults
        }
    }

    func deviceTargets(_ device: String?) throws -> [String] {
        guard let device, !device.isEmpty else { return everyAddress }
        guard let address = try? DeviceAddress.normalized(device), devices[address] != nil else {
            throw DBusError(name: DBusError.invalidArgs, message: "no simulated device \(device)")
        }
        return [address]
    }

    private func adapterTargets(_ adapter: String?) throws -> [String] {
        guard let adapter, !adapter.isEmpty else { return adapterNames }
        guard adapters[adapter] != nil else { throw DBusError(name: DBusError.invalidArgs, message: "no simulated adapter \(adapter)") }
        return [adapter]
    }

    /// Power off drops every link on the adapter and ends discovery; power on restores it. As
    /// BlueZ 5.66 does for a power change asked for over D-Bus (`set_mode`/`property_set_mode`
    /// in `src/adapter.c`), `PowerState` announces it first ("on-disabling", "off-enabling"); the
    /// links' `Connected` false follows, then `Powered` with `PowerState` "off" or "on".
    func setAdapterPowered(_ name: String, _ powered: Bool) async {
        guard let adapter = adapters[name] else { return }
        // Recorded before the first await, so that of two requests that overlap the later wins.
        adapters[name]?.powered = powered
        if adapter.powered != powered {
            await setProperties(
                ["PowerState": .string(powered ? "off-enabling" : "on-disabling")], of: Self.adapterInterfaceName, at: adapter.path)
        }
        if !powered {
            endDiscovery(on: name)
            for address in everyAddress where devices[address]?.linkAdapter == name {
                await dropLink(address, reason: .local, announce: true)
            }
        }
        await setProperties(
            ["Powered": .boolean(powered), "PowerState": .string(powered ? "on" : "off"), "Discovering": .boolean(false)],
            of: Self.adapterInterfaceName, at: adapter.path)
    }

    /// A snapshot of every device for the control interface.
    func deviceSummaries() -> [(address: String, values: [String: DBusValue])] {
        deviceAddresses.compactMap { address in
            guard let device = devices[address] else { return nil }
            var extra: [String: DBusValue] = [:]
            if let measurement = device.measurement {
                extra = ["Awake": .boolean(measurement.awake), "QueuedRecords": .uint32(UInt32(clamping: measurement.queue.count))]
            }
            return (
                address,
                extra.merging([
                    "Kind": .string(device.configuration.kind.rawValue), "Name": .string(device.configuration.name),
                    "Adapter": .string(device.linkAdapter ?? device.configuration.adapter),
                    "Path": .objectPath(device.linkObject?.path ?? device.home?.path ?? .root),
                    "Exported": .boolean(device.objects.values.contains(where: \.exported)),
                    "ExportedOn": .stringArray(device.configuration.heardBy.filter { device.objects[$0]?.exported == true }),
                    "Connected": .boolean(device.link.isUp),
                    "ServicesResolved": .boolean(device.link == .resolved), "InRange": .boolean(device.inRange),
                    "MTU": .uint16(device.configuration.mtu),
                ]) { kept, _ in kept }
            )
        }
    }

    var restartCount: Int { restarts }
}
