// Placement is a greedy pass in a fixed order: pinned links already held, other pinned devices,
// then pool devices by rank. Every choice is ordered by (value, DeviceID / AdapterID), so the same
// inputs always give the same plan.

/// Who should be connected where, before attempt gating. Internal to `PoolPolicy`.
struct PoolPlacement {
    var placements: [DeviceID: AdapterID] = [:]
    var evictions: [DeviceID: PoolEviction] = [:]
    /// Placed devices in the order they were decided: pinned first, then pool by rank.
    var order: [DeviceID] = []

    /// - Parameters:
    ///   - usable: powered adapters, the only ones that offer slots.
    init(
        devices: [PoolDeviceSnapshot],
        usable: [AdapterID],
        configuration: PoolConfiguration,
        now: MonotonicInstant
    ) {
        let usableSet = Set(usable)
        var capacity: [AdapterID: Int] = [:]
        for adapter in usable { capacity[adapter] = configuration.slots(for: adapter) }
        var used: [AdapterID: Int] = [:]

        func holder(_ device: PoolDeviceSnapshot) -> AdapterID? {
            guard let adapter = device.link.adapter, usableSet.contains(adapter) else { return nil }
            return adapter
        }
        func reachable(_ device: PoolDeviceSnapshot) -> [AdapterID] {
            usable.filter { device.isReachable(on: $0) }.sorted { lhs, rhs in
                let left = device.rssi[lhs] ?? PoolScoreWeights.unseenRSSI
                let right = device.rssi[rhs] ?? PoolScoreWeights.unseenRSSI
                return left != right ? left > right : lhs < rhs
            }
        }
        func bestRSSI(_ device: PoolDeviceSnapshot) -> Int {
            reachable(device).first.flatMap { device.rssi[$0] } ?? PoolScoreWeights.unseenRSSI
        }

        var pinnedHolders: [PoolDeviceSnapshot] = []
        var pinnedSeekers: [PoolDeviceSnapshot] = []
        var poolCandidates: [PoolDeviceSnapshot] = []
        for device in devices {
            if !device.isEligible, let adapter = holder(device) {
                evictions[device.id] = PoolEviction(device: device.id, adapter: adapter, reason: .notEligible)
                continue
            }
            guard device.isEligible, !reachable(device).isEmpty else { continue }
            switch (device.membership, holder(device)) {
            case (.pinned, .some): pinnedHolders.append(device)
            case (.pinned, .none): pinnedSeekers.append(device)
            case (.pool, _): poolCandidates.append(device)
            }
        }

        // Pool rank: incumbents still inside their dwell time (or mid-attempt) first, then by
        // score with the margin credited to incumbents, then incumbents before challengers on an
        // exact tie, then by DeviceID.
        struct Ranked {
            var device: PoolDeviceSnapshot
            var holder: AdapterID?
            var isProtected: Bool
            var effectiveScore: Double
        }
        let ranked: [Ranked] = poolCandidates.map { device in
            let held = holder(device)
            var isProtected = false
            if case .connected(_, let since) = device.link, held != nil {
                isProtected = now.duration(since: since) < configuration.minimumDwell
            } else if device.link.isAttempting, held != nil {
                isProtected = true
            }
            let score = configuration.weights.score(
                configuredPriority: device.configuredPriority,
                rssi: bestRSSI(device),
                recentFailures: device.recentFailures
            )
            return Ranked(
                device: device,
                holder: held,
                isProtected: isProtected,
                effectiveScore: score + (held != nil ? configuration.scoreMargin : 0)
            )
        }.sorted { lhs, rhs in
            if lhs.isProtected != rhs.isProtected { return lhs.isProtected }
            if lhs.effectiveScore != rhs.effectiveScore { return lhs.effectiveScore > rhs.effectiveScore }
            if (lhs.holder != nil) != (rhs.holder != nil) { return lhs.holder != nil }
            return lhs.device.id < rhs.device.id
        }

        // Slots held by pool incumbents not yet decided, lowest-ranked last so it is displaced first.
        var poolHeld: [AdapterID: [DeviceID]] = [:]
        for entry in ranked { if let adapter = entry.holder { poolHeld[adapter, default: []].append(entry.device.id) } }

        func free(_ adapter: AdapterID) -> Int {
            (capacity[adapter] ?? 0) - (used[adapter] ?? 0) - (poolHeld[adapter]?.count ?? 0)
        }
        func place(_ device: DeviceID, on adapter: AdapterID) {
            placements[device] = adapter
            used[adapter, default: 0] += 1
            order.append(device)
        }
        func displaceLowestPool(on adapter: AdapterID, reason: PoolEviction.Reason) {
            guard let victim = poolHeld[adapter]?.popLast() else { return }
            evictions[victim] = PoolEviction(device: victim, adapter: adapter, reason: reason)
        }
        /// Free slot on the best adapter first; otherwise the best adapter where a pool incumbent
        /// can be displaced.
        func seek(_ device: PoolDeviceSnapshot, displacing reason: PoolEviction.Reason) -> Bool {
            let candidates = reachable(device)
            if let adapter = candidates.first(where: { free($0) > 0 }) {
                place(device.id, on: adapter)
                return true
            }
            if let adapter = candidates.first(where: { free($0) + (poolHeld[$0]?.count ?? 0) > 0 }) {
                displaceLowestPool(on: adapter, reason: reason)
                place(device.id, on: adapter)
                return true
            }
            return false
        }

        // Pinned links already held stay where they are, unless the slots were lowered under them.
        for device in pinnedHolders.sorted(by: { $0.id < $1.id }) {
            guard let adapter = holder(device) else { continue }
            if (used[adapter] ?? 0) < (capacity[adapter] ?? 0) {
                place(device.id, on: adapter)
                while free(adapter) < 0, poolHeld[adapter]?.isEmpty == false {
                    displaceLowestPool(on: adapter, reason: .overCapacity)
                }
            } else {
                evictions[device.id] = PoolEviction(device: device.id, adapter: adapter, reason: .overCapacity)
            }
        }
        for device in pinnedSeekers.sorted(by: { lhs, rhs in
            let left = bestRSSI(lhs)
            let right = bestRSSI(rhs)
            return left != right ? left > right : lhs.id < rhs.id
        }) {
            _ = seek(device, displacing: .makeRoomForPinned)
        }

        var budget = max(0, configuration.maxConnections - placements.count)
        for entry in ranked {
            let id = entry.device.id
            if let adapter = entry.holder {
                // Displaced already (by a pinned device or a higher-ranked challenger).
                guard let index = poolHeld[adapter]?.firstIndex(of: id) else { continue }
                poolHeld[adapter]?.remove(at: index)
                if (used[adapter] ?? 0) >= (capacity[adapter] ?? 0) {
                    evictions[id] = PoolEviction(device: id, adapter: adapter, reason: .overCapacity)
                } else if budget > 0 {
                    place(id, on: adapter)
                    budget -= 1
                } else {
                    evictions[id] = PoolEviction(device: id, adapter: adapter, reason: .outranked)
                }
            } else if budget > 0, seek(entry.device, displacing: .outranked) {
                budget -= 1
            }
        }
    }
}
