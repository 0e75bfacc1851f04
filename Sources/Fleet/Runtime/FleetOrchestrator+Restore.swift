import BlueZ
import FleetCore

// Restoring what the state file knew: pinned devices start with their services and last adapter
// known, pool devices the daemon had connected before compete for slots again, and a device
// bluetoothd has forgotten (no Device1 object) is reached on its last adapter with
// `Adapter1.ConnectDevice` instead of waiting for a discovery.

extension FleetOrchestrator {
    /// Hands the state file's devices to the orchestrator. Call before `start()`.
    public func restore(_ known: [KnownDevice]) {
        for device in known { restored[device.id] = device }
    }

    /// Pool devices from the state file become candidates again (when the pool is on); pinned
    /// ones were created from the configuration, which decides membership.
    func addRestoredPoolDevices() {
        guard configuration.poolEnabled else { return }
        for (id, known) in restored.sorted(by: { $0.key < $1.key }) where devices[id] == nil {
            guard configuration.poolServiceFilter.isEmpty || !configuration.poolServiceFilter.isDisjoint(with: known.servicesSeen)
            else { continue }
            addDevice(id, pinned: false, name: known.name, className: configuration.poolClassName, priority: 0)
        }
    }

    /// After bluetoothd (re)appeared and announced its objects: every device it does not hold
    /// learns its last adapter as a place to connect it (`deviceFound` without an object path
    /// makes the central use `ConnectDevice`).
    func offerLastAdapters(tree: BlueZObjectTree) async {
        for (id, device) in devices.sorted(by: { $0.key < $1.key }) {
            guard let last = device.lastAdapter else { continue }
            let held = tree.devices(address: id.address.description).contains { BlueZEventTranslator.identity(of: $0) == id }
            guard !held, tree.adapters.contains(where: { $0.name == last.name }) else { continue }
            await device.actor.handle(.deviceFound(adapter: last))
        }
    }

    /// Tells a device added while running (reload, a new pool candidate) what the others
    /// already know: bluetoothd, the powered adapters and BlueZ's objects for it. `wanted` is
    /// applied before a live link is reported, so a link that is already up is adopted.
    func introduce(_ id: DeviceID, wanted: Bool) async {
        guard let actor = devices[id]?.actor else { return }
        let tree = await client.tree
        if bluetoothdPresent { await actor.handle(.bluetoothdAppeared) }
        for (adapter, record) in adapters.sorted(by: { $0.key < $1.key }) where record.powered {
            await actor.handle(.adapterPowered(adapter))
        }
        let objects = tree.devices(address: id.address.description).filter { BlueZEventTranslator.identity(of: $0) == id }
        for object in objects { await actor.handle(.deviceFound(adapter: BlueZEventTranslator.adapter(of: object))) }
        if objects.isEmpty, let last = devices[id]?.lastAdapter, adapters[last]?.powered == true {
            await actor.handle(.deviceFound(adapter: last))
        }
        if wanted { await actor.handle(.policyUpdated(wanted: true)) }
        if let live = objects.first(where: \.connected) {
            devices[id]?.link = .connected(BlueZEventTranslator.adapter(of: live), since: clock.now())
            await actor.handle(.connected)
        }
    }
}
