// The pool policy's side of the fleet machine: snapshots of every device go in, the plan's
// evictions, placements and grants come out as deliveries to device machines.

extension FleetStateMachine {
    mutating func evaluate(now: MonotonicInstant, _ actions: inout [Action]) {
        guard running else { return }
        var snapshots: [PoolDeviceSnapshot] = []
        snapshots.reserveCapacity(devices.count)
        // Sorting the keys, not (key, record) pairs: with 1,000 devices, copying the records
        // while sorting was most of an evaluation's cost.
        for id in devices.keys.sorted() {
            guard let device = devices[id] else { continue }
            var connectable = Set(device.objects.map(\.adapter))
            // bluetoothd forgot the device: its last adapter can still reach it with ConnectDevice.
            if connectable.isEmpty, let last = device.lastAdapter, isUsable(last) { connectable.insert(last) }
            snapshots.append(PoolDeviceSnapshot(
                id: id, membership: device.pinned ? .pinned : .pool,
                isEligible: !device.held && !device.awaitingOwnership && !device.state.isResting, configuredPriority: device.priority,
                rssi: device.lastRSSI, knownConnectable: connectable, link: device.link, wantsAttempt: device.wantsAttempt,
                restoreInProgress: false, recentFailures: device.recentFailures,
                bondedOn: Set(device.objects.filter(\.paired).map(\.adapter)),
                waitsForWake: device.state == .asleep))
        }
        let adapterSnapshots = adapters.filter(\.value.selected).sorted { $0.key < $1.key }.map {
            AdapterSnapshot(id: $0.key, isPowered: $0.value.powered)
        }
        let plan = policy.evaluate(
            devices: snapshots, adapters: adapterSnapshots,
            conditions: PoolCentralConditions(bluetoothdPresent: bluetoothdPresent, engineRunning: running), now: now)
        apply(plan, now: now, &actions)
        updatePoolSearch()
        lookForUnplacedPinned(plan)
    }

    private mutating func apply(_ plan: PoolPlan, now: MonotonicInstant, _ actions: inout [Action]) {
        for eviction in plan.evictions {
            guard let device = devices[eviction.device], !device.pinned, device.wanted else { continue }
            devices[eviction.device]?.wanted = false
            actions.append(.publish(.evicted(eviction.device, adapter: eviction.adapter, reason: eviction.reason)))
            actions.append(.deliver(eviction.device, .policyUpdated(wanted: false)))
        }
        for id in devices.keys.sorted() {
            guard let device = devices[id], !device.pinned else { continue }
            let wanted = plan.isWanted(id)
            if wanted != device.wanted {
                devices[id]?.wanted = wanted
                actions.append(.deliver(id, .policyUpdated(wanted: wanted)))
            }
        }
        for grant in plan.grants {
            guard devices[grant.device]?.wantsAttempt == true else {
                policy.attemptFinished(device: grant.device)
                continue
            }
            devices[grant.device]?.wantsAttempt = false
            devices[grant.device]?.link = .attempting(grant.adapter)
            // A newer attempt keeps the failed ones before it: the device machine takes back a
            // row of failed retries with the loss they followed (until a link comes up).
            actions.append(.publish(.attemptGranted(grant.device, adapter: grant.adapter, at: now)))
            actions.append(.deliver(grant.device, .attemptGranted(adapter: grant.adapter)))
        }
        actions.append(.scheduleEvaluation(at: plan.nextGrantInstant))
    }

    /// The pool looks for candidates (discovery) on powered adapters with a free slot, while the
    /// fleet is under `max_connections` (`driveDiscovery` follows it).
    private mutating func updatePoolSearch() {
        // One pass over the devices, however many adapters (this runs after every evaluation).
        var links = 0
        var used: [AdapterID: Int] = [:]
        for device in devices.values where device.link != .disconnected {
            links += 1
            if let adapter = device.link.adapter { used[adapter, default: 0] += 1 }
        }
        let fleetHasRoom = configuration.poolEnabled && links < configuration.pool.maxConnections
        for id in adapters.keys.sorted() {
            guard let adapter = adapters[id], adapter.selected else { continue }
            let searching = fleetHasRoom && adapter.powered && used[id, default: 0] < slots(of: id)
            if searching != adapter.poolSearching { adapters[id]?.poolSearching = searching }
        }
    }
}

extension FleetStateMachine {
    /// Pinned devices the plan could not place (every adapter that has heard them is full) while
    /// a powered adapter that has not heard them yet has room: discovery runs unfiltered until
    /// one of those reports them, and the next plan places them there. Without it, a cuff heard
    /// first by a full adapter missed its wake while the other adapter had room (real stack).
    mutating func lookForUnplacedPinned(_ plan: PoolPlan) {
        var lost: Set<DeviceID> = []
        let usable = adapters.filter { $0.value.selected && $0.value.powered }.map(\.key)
        var room: [AdapterID: Int] = [:]
        for adapter in usable { room[adapter] = slots(of: adapter) }
        for device in devices.values { if let adapter = device.link.adapter { room[adapter, default: 0] -= 1 } }
        for (id, device) in devices where device.pinned && device.wantsAttempt && device.link == .disconnected && plan.placements[id] == nil {
            guard !device.held, !device.awaitingOwnership, !device.state.isResting, !device.objects.isEmpty else { continue }
            let heardOn = Set(device.objects.map(\.adapter))
            if usable.contains(where: { !heardOn.contains($0) && (room[$0] ?? 0) > 0 }) { lost.insert(id) }
        }
        lookingElsewhere = lost
    }
}
