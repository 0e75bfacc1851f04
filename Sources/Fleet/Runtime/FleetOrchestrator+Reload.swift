import BlueZ
import FleetCore

// Reload applies a new configuration as a diff. Links that stay wanted are never dropped:
// a class change takes effect at the device's next connection, a new reconnect policy at its
// next failure, a new pool configuration at the next placement (grants in flight stay counted).

extension FleetOrchestrator {
    /// What a reload changed, for the log line and for tests.
    public struct ReloadSummary: Sendable, Equatable, CustomStringConvertible {
        public var pinnedAdded: [DeviceID] = []
        /// No longer pinned: they stay as pool candidates when the pool takes them, else are
        /// disconnected and forgotten by the runtime (the state file keeps them).
        public var pinnedRemoved: [DeviceID] = []
        /// Devices whose class, class settings or reconnect policy changed.
        public var reconfigured: [DeviceID] = []
        public var adaptersChanged = false

        public var description: String {
            "\(pinnedAdded.count) pinned added, \(pinnedRemoved.count) unpinned, \(reconfigured.count) reconfigured"
                + (adaptersChanged ? ", adapters changed" : "")
        }
    }

    /// Applies a reloaded, already validated configuration.
    @discardableResult
    public func reconfigure(_ new: FleetRuntimeConfiguration) async -> ReloadSummary {
        let old = configuration
        configuration = new
        var summary = ReloadSummary()
        policy.reconfigure(new.pool, now: clock.now())

        let newPinned = Dictionary(new.pinned.map { ($0.id, $0) }, uniquingKeysWith: { _, last in last })
        for pinned in new.pinned where devices[pinned.id]?.pinned != true {
            summary.pinnedAdded.append(pinned.id)
            if devices[pinned.id] == nil {
                addDevice(pinned.id, pinned: true, name: pinned.name, className: pinned.className, priority: pinned.priority)
                if running { await introduce(pinned.id, wanted: true) }
            } else {
                // A pool device becomes pinned: same actor, same link, now always wanted.
                devices[pinned.id]?.pinned = true
                devices[pinned.id]?.wanted = true
                if running { await devices[pinned.id]?.actor.handle(.policyUpdated(wanted: true)) }
            }
        }
        for (id, device) in devices.sorted(by: { $0.key < $1.key }) where device.pinned && newPinned[id] == nil {
            summary.pinnedRemoved.append(id)
            devices[id]?.pinned = false
            devices[id]?.priority = 0
            devices[id]?.className = new.poolClassName
            if !new.poolEnabled {
                await forget(id)
            }
            // With the pool on, the next placement decides whether it keeps its link.
        }

        for (id, device) in devices.sorted(by: { $0.key < $1.key }) {
            if let pinned = newPinned[id] {
                devices[id]?.name = pinned.name ?? device.name
                devices[id]?.priority = pinned.priority
                devices[id]?.className = pinned.className
            }
            guard let current = devices[id] else { continue }
            let wanted = (new.deviceConfiguration(className: current.className), new.reconnect)
            let running = await device.actor.configuration
            if running.device != wanted.0 || running.reconnect != wanted.1 {
                await device.actor.reconfigure(wanted.0, reconnectPolicy: wanted.1)
                if !summary.pinnedAdded.contains(id) { summary.reconfigured.append(id) }
            }
        }

        await refreshWriteOptions()
        if old.scanUUIDs != new.scanUUIDs || old.minimumRSSI != new.minimumRSSI {
            for (_, record) in adapters { await record.central.updateFilter(scanUUIDs: new.scanUUIDs, minimumRSSI: new.minimumRSSI) }
        }
        if old.adapters != new.adapters {
            summary.adaptersChanged = true
            await applyAdapterSelection()
        }
        scheduleEvaluation()
        return summary
    }

    /// Stops managing a device: releases its link and forgets it (the state file keeps it).
    func forget(_ id: DeviceID) async {
        guard let device = devices[id] else { return }
        await device.actor.handle(.policyUpdated(wanted: false))
        await device.actor.shutDown()
        poller.remove(device: id)
        if device.link != .disconnected { await transport.disconnect(id) }
        policy.attemptFinished(device: id)
        await writes.remove(id)
        writeConfigured.remove(id)
        devices[id] = nil
        notifyObservers { $0.deviceRemoved(id) }
    }

    /// After `[fleet] adapters` changed: adapters no longer selected are treated as powered off
    /// (their links and attempts end), newly selected ones are taken up as bluetoothd reports them.
    func applyAdapterSelection() async {
        let tree = await client.tree
        for (adapter, record) in adapters.sorted(by: { $0.key < $1.key }) where !isSelected(adapter) && record.powered {
            adapters[adapter]?.powered = false
            await record.central.discoveryStopped()
            for (_, device) in devices { await device.actor.handle(.adapterUnpowered(adapter)) }
        }
        for object in tree.adapters {
            let adapter = AdapterID(object.name)
            guard isSelected(adapter), adapters[adapter]?.powered != object.powered else { continue }
            await adapterChanged(adapter, powered: object.powered)
            if object.powered {
                for (_, device) in devices { await device.actor.handle(.adapterPowered(adapter)) }
            }
        }
    }

    func isSelected(_ adapter: AdapterID) -> Bool {
        configuration.adapters.isEmpty || configuration.adapters.contains(adapter)
    }
}
