// Placement is a greedy pass in a fixed order: pinned devices holding a slot, other pinned
// devices (with an augmenting-path repair), then pool devices by rank. Every choice is ordered by
// (value, DeviceID / AdapterID), so the same inputs always give the same plan.
//
// A device placed without a link yet keeps a reservation on its adapter until it connects or the
// plan drops it, and is placed next time as if it already held that slot. Without it, a slot freed
// by an eviction looks free to everyone on the next evaluation, a device placed earlier moves
// into it, and the chain of choices shifts until someone has to be evicted again: the pool flaps.

/// Who should be connected where, before attempt gating. Internal to `PoolPolicy`.
struct PoolPlacement {
    var placements: [DeviceID: AdapterID] = [:]
    var evictions: [DeviceID: PoolEviction] = [:]
    /// Placed devices in the order they were decided: pinned first, then pool by rank.
    var order: [DeviceID] = []
    /// Placed devices without a link yet, to be fed back as `previous` next time.
    var reservations: [DeviceID: AdapterID] = [:]

    private struct Ranked {
        var device: PoolDeviceSnapshot
        var holder: AdapterID?
        var isProtected: Bool
        var effectiveScore: Double
        /// A displaced incumbent seeking a new slot must not come back to the one it lost.
        var excluded: AdapterID?
    }

    private let configuration: PoolConfiguration
    private let usableSet: Set<AdapterID>
    private let previous: [DeviceID: AdapterID]
    private var byID: [DeviceID: PoolDeviceSnapshot] = [:]
    /// Usable adapters reaching each device, best RSSI first; computed once per evaluation.
    private var reach: [DeviceID: [AdapterID]] = [:]
    private var linked: Set<DeviceID> = []
    private var capacity: [AdapterID: Int] = [:]
    private var used: [AdapterID: Int] = [:]
    /// Slots held by pool incumbents not yet decided, lowest-ranked last so it goes first.
    private var poolHeld: [AdapterID: [DeviceID]] = [:]
    /// Pinned devices without a link; they may move to make room for another pinned device.
    private var movable: [AdapterID: [DeviceID]] = [:]
    /// Pool devices that lost their slot, to compete again as challengers.
    private var displaced: [(device: DeviceID, from: AdapterID)] = []

    /// - Parameters:
    ///   - usable: powered adapters, the only ones that offer slots.
    ///   - previous: the previous evaluation's `reservations`.
    init(
        devices: [PoolDeviceSnapshot],
        usable: [AdapterID],
        configuration: PoolConfiguration,
        reservations previous: [DeviceID: AdapterID],
        now: MonotonicInstant
    ) {
        self.configuration = configuration
        self.usableSet = Set(usable)
        self.previous = previous
        for adapter in usable { capacity[adapter] = configuration.slots(for: adapter) }
        for device in devices {
            byID[device.id] = device
            reach[device.id] = usable.filter { device.isReachable(on: $0) }.sorted { lhs, rhs in
                let left = device.rssi[lhs] ?? PoolScoreWeights.unseenRSSI
                let right = device.rssi[rhs] ?? PoolScoreWeights.unseenRSSI
                return left != right ? left > right : lhs < rhs
            }
            if let adapter = device.link.adapter, usableSet.contains(adapter) { linked.insert(device.id) }
        }

        var pinnedHolders: [PoolDeviceSnapshot] = []
        var pinnedSeekers: [PoolDeviceSnapshot] = []
        var poolCandidates: [PoolDeviceSnapshot] = []
        for device in devices {
            if !device.isEligible, let adapter = holder(device) {
                evict(device.id, from: adapter, reason: .notEligible)
                continue
            }
            guard device.isEligible, !reachable(device).isEmpty else { continue }
            switch (device.membership, holder(device)) {
            case (.pinned, .some): pinnedHolders.append(device)
            case (.pinned, .none): pinnedSeekers.append(device)
            case (.pool, _): poolCandidates.append(device)
            }
        }

        var ranked = poolCandidates.map { rank($0, now: now) }.sorted(by: Self.precedes)
        for entry in ranked {
            if let adapter = entry.holder { poolHeld[adapter, default: []].append(entry.device.id) }
        }

        placePinned(holders: pinnedHolders, seekers: pinnedSeekers)
        placePool(&ranked)

        // A pinned device keeps its place while linked too, so that the moment its link ends
        // (a measurement device's session, a strap's radio loss) the slot is still its own and
        // its next attempt or pending Connect goes there, not to whoever asked in between.
        for (device, adapter) in placements where !linked.contains(device) || byID[device]?.isPinned == true {
            reservations[device] = adapter
        }
    }

    // MARK: - Pinned

    private mutating func placePinned(holders: [PoolDeviceSnapshot], seekers: [PoolDeviceSnapshot]) {
        var seekers = seekers
        // Links first, then reservations; each stays unless the slots were lowered under it.
        let holdersInOrder = holders.sorted { lhs, rhs in
            let left = linked.contains(lhs.id)
            let right = linked.contains(rhs.id)
            return left != right ? left : lhs.id < rhs.id
        }
        for device in holdersInOrder {
            guard let adapter = holder(device) else { continue }
            let isLinked = linked.contains(device.id)
            if (used[adapter] ?? 0) < (capacity[adapter] ?? 0) {
                place(device.id, on: adapter)
                if !isLinked { movable[adapter, default: []].append(device.id) }
                while free(adapter) < 0, poolHeld[adapter]?.isEmpty == false {
                    displaceLowestPool(on: adapter, reason: isLinked ? .overCapacity : .makeRoomForPinned)
                }
            } else if isLinked {
                evict(device.id, from: adapter, reason: .overCapacity)
            } else {
                seekers.append(device)
            }
        }

        var unplaced: [PoolDeviceSnapshot] = []
        for device in seekers.sorted(by: { lhs, rhs in
            let left = bestRSSI(lhs)
            let right = bestRSSI(rhs)
            return left != right ? left > right : lhs.id < rhs.id
        }) {
            if let adapter = seek(device, displacing: .makeRoomForPinned, excluding: nil) {
                movable[adapter, default: []].append(device.id)
            } else {
                unplaced.append(device)
            }
        }
        for device in unplaced { repair(device) }
    }

    /// Places a pinned device the greedy pass left out by moving other unlinked pinned devices
    /// along a chain of adapters (an augmenting path, found breadth first), preferring a chain
    /// that ends in a free slot to one that ends by displacing a pool device. So a pinned device
    /// is only left out when pinned devices really fill every slot it could get.
    private mutating func repair(_ device: PoolDeviceSnapshot) {
        for displacing in [false, true] {
            var parent: [AdapterID: (from: AdapterID, moved: DeviceID)] = [:]
            var visited = Set(reachable(device))
            var queue = reachable(device)
            var found: AdapterID?
            search: while !queue.isEmpty {
                let adapter = queue.removeFirst()
                for moved in (movable[adapter] ?? []).sorted() {
                    guard let snapshot = byID[moved] else { continue }
                    for target in reachable(snapshot) where !visited.contains(target) {
                        visited.insert(target)
                        parent[target] = (adapter, moved)
                        let room = displacing ? (capacity[target] ?? 0) - (used[target] ?? 0) : free(target)
                        if room > 0 {
                            found = target
                            break search
                        }
                        queue.append(target)
                    }
                }
            }
            guard var current = found else { continue }
            if free(current) <= 0 { displaceLowestPool(on: current, reason: .makeRoomForPinned) }
            while let step = parent[current] {
                placements[step.moved] = current
                used[current, default: 0] += 1
                used[step.from, default: 0] -= 1
                movable[step.from]?.removeAll { $0 == step.moved }
                movable[current, default: []].append(step.moved)
                current = step.from
            }
            place(device.id, on: current)
            return
        }
    }

    // MARK: - Pool

    private mutating func placePool(_ ranked: inout [Ranked]) {
        var budget = max(0, configuration.maxConnections - placements.count)
        var position = 0
        while position < ranked.count {
            // A displaced device competes again at its rank as a challenger (no incumbent
            // credit), so one evaluation settles where it goes rather than the next one.
            for (device, from) in displaced {
                guard let snapshot = byID[device] else { continue }
                let challenger = Ranked(
                    device: snapshot, holder: nil, isProtected: false, effectiveScore: score(snapshot), excluded: from
                )
                let index = ranked[position...].firstIndex { Self.precedes(challenger, $0) } ?? ranked.count
                ranked.insert(challenger, at: index)
            }
            displaced = []
            let entry = ranked[position]
            position += 1
            let id = entry.device.id
            if let adapter = entry.holder {
                // Displaced already (by a pinned device or a higher-ranked challenger).
                guard let index = poolHeld[adapter]?.firstIndex(of: id) else { continue }
                poolHeld[adapter]?.remove(at: index)
                if (used[adapter] ?? 0) >= (capacity[adapter] ?? 0) {
                    evict(id, from: adapter, reason: .overCapacity)
                } else if budget > 0 {
                    place(id, on: adapter)
                    budget -= 1
                } else {
                    evict(id, from: adapter, reason: .outranked)
                }
            } else if budget > 0, seek(entry.device, displacing: .outranked, excluding: entry.excluded) != nil {
                budget -= 1
            }
        }
    }

    /// Rank: incumbents inside their dwell time (or mid-attempt) first, then by score with the
    /// margin credited to incumbents (links and reservations), then incumbents before
    /// challengers on an exact tie, then by DeviceID.
    private static func precedes(_ lhs: Ranked, _ rhs: Ranked) -> Bool {
        if lhs.isProtected != rhs.isProtected { return lhs.isProtected }
        if lhs.effectiveScore != rhs.effectiveScore { return lhs.effectiveScore > rhs.effectiveScore }
        if (lhs.holder != nil) != (rhs.holder != nil) { return lhs.holder != nil }
        return lhs.device.id < rhs.device.id
    }

    private func rank(_ device: PoolDeviceSnapshot, now: MonotonicInstant) -> Ranked {
        let held = holder(device)
        var isProtected = false
        if held != nil {
            switch device.link {
            case .connected(_, let since): isProtected = now.duration(since: since) < configuration.minimumDwell
            case .attempting: isProtected = true
            // Its device sleeps and may wake any moment: its place is kept like an attempt's.
            case .standing: isProtected = true
            case .disconnected: isProtected = false
            }
        }
        return Ranked(
            device: device,
            holder: held,
            isProtected: isProtected,
            effectiveScore: score(device) + (held != nil ? configuration.scoreMargin : 0),
            excluded: nil
        )
    }

    // MARK: - Slots

    /// The adapter whose slot the device holds: by a link, or by a reservation.
    private func holder(_ device: PoolDeviceSnapshot) -> AdapterID? {
        if let adapter = device.link.adapter {
            return usableSet.contains(adapter) ? adapter : nil
        }
        guard let adapter = previous[device.id], usableSet.contains(adapter), device.isReachable(on: adapter) else {
            return nil
        }
        return adapter
    }

    /// Usable adapters reaching the device, best RSSI first.
    private func reachable(_ device: PoolDeviceSnapshot) -> [AdapterID] {
        reach[device.id] ?? []
    }

    private func bestRSSI(_ device: PoolDeviceSnapshot) -> Int {
        reachable(device).first.flatMap { device.rssi[$0] } ?? PoolScoreWeights.unseenRSSI
    }

    private func score(_ device: PoolDeviceSnapshot) -> Double {
        configuration.weights.score(
            configuredPriority: device.configuredPriority,
            rssi: bestRSSI(device),
            recentFailures: device.recentFailures
        )
    }

    private func free(_ adapter: AdapterID) -> Int {
        (capacity[adapter] ?? 0) - (used[adapter] ?? 0) - (poolHeld[adapter]?.count ?? 0)
    }

    private mutating func place(_ device: DeviceID, on adapter: AdapterID) {
        placements[device] = adapter
        used[adapter, default: 0] += 1
        order.append(device)
    }

    private mutating func evict(_ device: DeviceID, from adapter: AdapterID, reason: PoolEviction.Reason) {
        // A reservation has no link to close; losing it is enough.
        guard linked.contains(device) else { return }
        evictions[device] = PoolEviction(device: device, adapter: adapter, reason: reason)
    }

    private mutating func displaceLowestPool(on adapter: AdapterID, reason: PoolEviction.Reason) {
        guard let victim = poolHeld[adapter]?.popLast() else { return }
        evict(victim, from: adapter, reason: reason)
        displaced.append((victim, adapter))
    }

    /// Places the device on the best reaching adapter with a free slot, or else on the best one
    /// where a pool incumbent can be displaced; returns the adapter, or nil if none has room.
    private mutating func seek(_ device: PoolDeviceSnapshot, displacing reason: PoolEviction.Reason, excluding: AdapterID?) -> AdapterID? {
        let candidates = reachable(device).filter { $0 != excluding }
        // A bonded device goes where its keys are while one of those adapters has room (a free
        // slot, or a pool device to displace): through another it would bond again, and a
        // device that keeps one bond loses the first. Only when they are all full of links that
        // stay does it go elsewhere — bonding again beats never connecting.
        let bonded = candidates.filter { device.bondedOn.contains($0) }
        let others = candidates.filter { !device.bondedOn.contains($0) }
        for group in [bonded, others] {
            if let adapter = group.first(where: { free($0) > 0 }) {
                place(device.id, on: adapter)
                return adapter
            }
            if let adapter = group.first(where: { (capacity[$0] ?? 0) - (used[$0] ?? 0) > 0 }) {
                displaceLowestPool(on: adapter, reason: reason)
                place(device.id, on: adapter)
                return adapter
            }
        }
        return nil
    }
}
