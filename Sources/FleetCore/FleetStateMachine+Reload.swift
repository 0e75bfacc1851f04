// Reload applies a new configuration as a diff, in one input. Links that stay wanted are never
// dropped: a class change takes effect at the device's next connection, a new reconnect policy
// at its next failure, a new pool configuration at the next placement (grants in flight stay
// counted).

extension FleetStateMachine {
    /// What a reload changed, for the log line and for tests.
    public struct ReloadSummary: Sendable, Hashable, CustomStringConvertible {
        public var pinnedAdded: [DeviceID] = []
        /// No longer pinned: they stay as pool candidates when the pool takes them, else are
        /// disconnected and forgotten by the runtime (the state file keeps them).
        public var pinnedRemoved: [DeviceID] = []
        /// Devices whose class, class settings or reconnect policy changed.
        public var reconfigured: [DeviceID] = []
        /// Pool devices let go: the pool was turned off, or its filters no longer admit them.
        public var poolReleased: [DeviceID] = []
        /// Pool devices whose priority or class changed under the new `[pool]` rules.
        public var poolReranked: [DeviceID] = []
        public var adaptersChanged = false
        /// Run-time pins whose class the new configuration no longer defines, with that class:
        /// they run with the `default` class until pinned again (or the class comes back).
        public var runtimePinsWithoutClass: [DeviceID: String] = [:]

        public init() {}

        public var description: String {
            "\(pinnedAdded.count) pinned added, \(pinnedRemoved.count) unpinned, \(reconfigured.count) reconfigured"
                + (poolReleased.isEmpty ? "" : ", \(poolReleased.count) pool released")
                + (poolReranked.isEmpty ? "" : ", \(poolReranked.count) pool re-ranked")
                + (adaptersChanged ? ", adapters changed" : "")
                + (runtimePinsWithoutClass.isEmpty ? "" : ", \(runtimePinsWithoutClass.count) run-time pins lost their class")
        }
    }

    mutating func reload(
        _ new: FleetRuntimeConfiguration, objects: [DeviceID: [DeviceObject]], now: MonotonicInstant, _ actions: inout [Action]
    ) -> ReloadSummary {
        let old = configuration
        // What each device's machine runs with now follows from its class in the old configuration.
        let classBefore = devices.mapValues(\.className)
        configuration = new
        var summary = ReloadSummary()
        policy.reconfigure(new.pool, now: now)
        for pin in runtimePins.values where new.classes[pin.className] == nil {
            summary.runtimePinsWithoutClass[pin.id] = pin.className
        }

        let pins = effectivePins(new)
        let newPinned = Dictionary(pins.map { ($0.id, $0) }, uniquingKeysWith: { _, last in last })
        for pinned in pins where devices[pinned.id]?.pinned != true {
            guard !summary.pinnedAdded.contains(pinned.id) else { continue }
            summary.pinnedAdded.append(pinned.id)
            if devices[pinned.id] == nil {
                addDevice(pinned.id, pinned: true, name: pinned.name, className: pinned.className, priority: pinned.priority, &actions)
                noteObjects(pinned.id, objects[pinned.id] ?? [])
                if running { introduce(pinned.id, wanted: true, now: now, &actions) }
            } else {
                // A pool device becomes pinned: same machine, same link, now always wanted.
                devices[pinned.id]?.pinned = true
                let wanted = devices[pinned.id].map(pinnedWanted) ?? false
                devices[pinned.id]?.wanted = wanted
                if running, wanted { actions.append(.deliver(pinned.id, .policyUpdated(wanted: true))) }
            }
        }
        for id in devices.keys.sorted() where devices[id]?.pinned == true && newPinned[id] == nil {
            summary.pinnedRemoved.append(id)
            devices[id]?.pinned = false
            devices[id]?.priority = 0
            devices[id]?.className = new.poolClassName
            // With the pool on, the next placement decides whether it keeps its link.
            if !new.poolEnabled { forget(id, because: .unpinnedByConfiguration, &actions) }
        }

        rankPoolDevices(skipping: Set(summary.pinnedRemoved), &summary, &actions)

        for id in devices.keys.sorted() {
            if let pinned = newPinned[id] {
                if let name = pinned.name { devices[id]?.name = name }
                devices[id]?.priority = pinned.priority
                devices[id]?.className = pinned.className
            }
            // A device created by this reload already runs with the new configuration.
            guard let device = devices[id], let before = classBefore[id] else { continue }
            let wanted = machineConfiguration(of: device, className: device.className, in: new)
            let running = machineConfiguration(of: device, className: before, in: old)
            if running != wanted || old.reconnect != new.reconnect {
                actions.append(.reconfigureDevice(id, wanted, new.reconnect))
                if !summary.pinnedAdded.contains(id) { summary.reconfigured.append(id) }
            }
            // Every device's write options are taken from its (possibly new) class.
            if device.writesConfigured {
                actions.append(.configureWrites(id, new.writeSettings(className: device.className).options))
            }
        }

        if old.adapters != new.adapters {
            summary.adaptersChanged = true
            applyAdapterSelection(&actions)
        }
        actions.append(.publish(.reloaded(summary)))
        requestEvaluation(&actions)
        return summary
    }

    /// Pool devices under the new `[pool]`: with the pool off, or no longer admitted, they are
    /// disconnected and forgotten (the state file keeps them); the others take priority and class
    /// from the new rules, and the evaluation that follows the reload places them by it.
    private mutating func rankPoolDevices(skipping: Set<DeviceID>, _ summary: inout ReloadSummary, _ actions: inout [Action]) {
        for id in devices.keys.sorted() where !skipping.contains(id) {
            guard let device = devices[id], !device.pinned else { continue }
            guard configuration.poolEnabled,
                let placement = poolPlacement(name: device.name, services: device.poolServices, rssi: nil)
            else {
                summary.poolReleased.append(id)
                forget(id, because: .notAdmitted, &actions)
                continue
            }
            guard placement.priority != device.priority || placement.className != device.className else { continue }
            devices[id]?.priority = placement.priority
            devices[id]?.className = placement.className
            summary.poolReranked.append(id)
        }
    }

    /// After `[fleet] adapters` changed: adapters no longer selected are treated as powered off
    /// (their links and attempts end, and their discovery stops), newly selected ones are taken up
    /// as bluetoothd has them.
    private mutating func applyAdapterSelection(_ actions: inout [Action]) {
        for id in adapters.keys.sorted() {
            guard let adapter = adapters[id] else { continue }
            let selected = isSelected(id)
            if adapter.selected, !selected {
                if adapter.powered {
                    actions.append(.publish(.adapterPowerChanged(id, powered: false)))
                    deliverToAll(.adapterUnpowered(id), &actions)
                }
                adapters[id]?.selected = false
                adapters[id]?.poolSearching = false
            } else if !adapter.selected, selected {
                adapters[id]?.selected = true
                actions.append(.createCentral(id))
                guard adapter.powered, bluetoothdPresent else { continue }
                actions.append(.publish(.adapterPowerChanged(id, powered: true)))
                deliverToAll(.adapterPowered(id), &actions)
            }
        }
    }
}
