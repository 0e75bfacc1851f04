// The messages a gateway sends on its own behalf, whatever the devices: heartbeats on a fixed
// period, bids only when they moved, and the one timer the runtime keeps for the machine.

extension OwnershipMachine {
    mutating func publishHeartbeatIfDue(now: MonotonicInstant, actions: inout [OwnershipAction]) {
        guard connectedSince != nil else { return }
        if !heartbeatOwed, let last = lastHeartbeatAt, now < last + configuration.renewal { return }
        heartbeatOwed = false
        lastHeartbeatAt = now
        actions.append(.publishHeartbeat)
    }

    /// This gateway's bids as they are now: one per device it hears.
    var currentBids: [DeviceID: OwnershipBid] {
        var bids: [DeviceID: OwnershipBid] = [:]
        for (device, record) in devices {
            if let score = record.score { bids[device] = OwnershipBid(score: score) }
        }
        return bids
    }

    /// Whether the device's bid moved enough to be worth a message: heard or lost since the last
    /// message, or its score moved by more than `hysteresis`.
    func bidMoved(_ device: DeviceID, score: Double?) -> Bool {
        switch (score, publishedBids[device]?.score) {
        case (nil, nil): false
        case (let score?, let published?): abs(score - published) > configuration.hysteresis
        default: true
        }
    }

    /// Publishes the whole set of bids when they moved, at most once per `bidInterval` — once
    /// per `settle` when a device that no live gateway owns is heard anew (a dead gateway's
    /// devices start advertising: waiting for the interval would add it to every handoff) — and
    /// at once after a reconnection (the broker may have lost them, and peers may be new).
    mutating func publishBidsIfDue(now: MonotonicInstant, actions: inout [OwnershipAction]) {
        guard connectedSince != nil else { return }
        if !bidsOwed {
            guard !movedBids.isEmpty else { return }
            if let last = lastBidsAt, now < last + bidSpacing(now: now) { return }
        }
        let current = currentBids
        bidsOwed = false
        movedBids = []
        lastBidsAt = now
        for device in devices.keys {
            if current[device] == nil {
                devices[device]?.bidPublishedSince = nil
            } else if publishedBids[device] == nil || devices[device]?.bidPublishedSince == nil {
                devices[device]?.bidPublishedSince = now
            }
        }
        publishedBids = current
        actions.append(.publishBids(current))
    }

    /// The shortest time between two bids messages now: `settle` while a device no live gateway
    /// owns has newly been heard, else `bidInterval`.
    func bidSpacing(now: MonotonicInstant) -> Duration {
        let urgent = movedBids.contains { device in
            publishedBids[device] == nil && devices[device]?.score != nil && ownerIsGone(devices[device]?.greatest, now: now)
        }
        return urgent ? min(configuration.settle, configuration.bidInterval) : configuration.bidInterval
    }

    /// Asks for a tick at the earliest instant at which a rule could decide differently with no
    /// new input: a heartbeat or bids due, a grace or settle ending, a peer's lease running out,
    /// a challenge's dwell ending, an unheard device's lease running out.
    mutating func scheduleNextTick(now: MonotonicInstant, actions: inout [OwnershipAction]) {
        guard let since = connectedSince else {
            // Without the broker nothing is decided by time: links stay, nothing is claimed.
            scheduledTick = nil
            return
        }
        var next: MonotonicInstant?
        func consider(_ instant: MonotonicInstant?) {
            guard let instant, instant > now else { return }
            if let earliest = next, earliest <= instant { return }
            next = instant
        }
        let configuration = configuration
        consider(lastHeartbeatAt.map { $0 + configuration.renewal })
        if !movedBids.isEmpty {
            let spacing = bidSpacing(now: now)
            consider(lastBidsAt.map { $0 + spacing })
        }
        consider(since + configuration.resyncGrace)
        consider(since + configuration.settle)
        for record in peers.values {
            if let offline = record.offlineSince {
                consider(offline + configuration.settle)
            } else {
                consider(max(record.lastHeartbeat ?? since, since) + configuration.lease)
            }
        }
        for record in devices.values {
            consider(record.heldSince.map { $0 + configuration.settle })
            consider(record.bidPublishedSince.map { $0 + configuration.settle })
            consider(record.challengedSince.map { $0 + configuration.dwell })
            if record.republishDue { consider(record.lastPublishedAt.map { $0 + configuration.settle }) }
            if record.holds(gateway), record.score == nil, !record.linked { consider(record.quietSince + configuration.lease) }
        }
        guard next != scheduledTick else { return }
        scheduledTick = next
        if let next { actions.append(.scheduleTick(at: next)) }
    }
}
