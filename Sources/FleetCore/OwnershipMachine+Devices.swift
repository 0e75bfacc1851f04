// The per-device rules of `OwnershipMachine`, applied in one order after every input: first
// agree with what the broker says (reconcile), then finish what was started (a handoff), then
// decide anything new (claim, hand over, let go), and last tell the fleet whether to hold the
// link. Each rule reads the record as the earlier ones left it, so one input settles a device.

extension OwnershipMachine {
    mutating func evaluate(_ device: DeviceID, now: MonotonicInstant, actions: inout [OwnershipAction]) {
        guard var record = devices[device] else { return }
        reconcile(&record, device: device, now: now, actions: &actions)
        finishHandoff(&record, device: device, now: now, actions: &actions)
        republishIfDue(&record, now: now, actions: &actions)
        if isPastResyncGrace(now: now) {
            claimIfUnowned(&record, device: device, now: now, actions: &actions)
            handOverIfBeaten(&record, device: device, now: now, actions: &actions)
            releaseIfGone(&record, device: device, now: now, actions: &actions)
        }
        updateLinkWanted(&record, device: device, now: now, actions: &actions)
        devices[device] = record
    }

    /// Publishes a claim this gateway writes and takes it as the greatest at once, so that it
    /// acts on its own decision before the broker echoes it.
    func publish(_ claim: OwnerClaim, into record: inout DeviceRecord, now: MonotonicInstant, actions: inout [OwnershipAction]) {
        if !(record.greatest.map(claim.isSameClaim) ?? false) {
            record.heldSince = nil
            record.challengedSince = nil
        }
        record.greatest = claim
        record.authoredGreatest = true
        record.republishDue = false
        record.lastPublishedAt = now
        actions.append(.publishClaim(claim))
    }

    // MARK: - Agreeing with the broker

    /// Keeps the owner's `linked` truthful (a new revision when it changes), and lets the holder
    /// of a real link win over a claim that names nobody, or a gateway without the link.
    private func reconcile(_ record: inout DeviceRecord, device: DeviceID, now: MonotonicInstant, actions: inout [OwnershipAction]) {
        guard connectedSince != nil, record.yieldingTo == nil, let greatest = record.greatest else { return }
        if greatest.gateway == gateway {
            guard greatest.linked != record.linked else { return }
            var update = greatest
            update.revision += 1
            update.linked = record.linked
            publish(update, into: &record, now: now, actions: &actions)
        } else if record.linked, greatest.gateway == nil || !greatest.linked {
            // The peripheral accepts one central, so the gateway holding the link is the one that
            // can serve it now; taking the claim above the other costs nobody a link, where
            // releasing would cost a disconnect and a reconnect elsewhere.
            let claim = OwnerClaim(device: device, gateway: gateway, epoch: greatest.epoch + 1, linked: true)
            publish(claim, into: &record, now: now, actions: &actions)
        }
    }

    /// Once the link of a device being handed over is down, publishes the successor's claim.
    private func finishHandoff(_ record: inout DeviceRecord, device: DeviceID, now: MonotonicInstant, actions: inout [OwnershipAction]) {
        guard let successor = record.yieldingTo else { return }
        guard let greatest = record.greatest, greatest.gateway == gateway else {
            // A greater claim overtook the handoff: that gateway owns the device now.
            record.yieldingTo = nil
            return
        }
        guard connectedSince != nil, !record.linked else { return }
        let claim = OwnerClaim(device: device, gateway: successor, epoch: greatest.epoch + 1, linked: false)
        record.yieldingTo = nil
        record.challengedSince = nil
        publish(claim, into: &record, now: now, actions: &actions)
    }

    /// Rule 1's second half: writes the winning claim again after a lower one arrived, at most
    /// once per `settle` per device. Without the limit, two gateways that each answer for a claim
    /// could answer every stale copy in flight with a new message, and copies would multiply.
    private func republishIfDue(_ record: inout DeviceRecord, now: MonotonicInstant, actions: inout [OwnershipAction]) {
        guard record.republishDue, connectedSince != nil else { return }
        guard let greatest = record.greatest, greatest.gateway == gateway || record.authoredGreatest else {
            record.republishDue = false
            return
        }
        if let last = record.lastPublishedAt, now < last + configuration.settle { return }
        record.republishDue = false
        record.lastPublishedAt = now
        actions.append(.publishClaim(greatest))
    }

    // MARK: - Deciding

    /// Rule 2: claim a device nobody (live) owns, if this gateway is the best live bidder.
    private func claimIfUnowned(
        _ record: inout DeviceRecord, device: DeviceID, now: MonotonicInstant, actions: inout [OwnershipAction]
    ) {
        guard !record.holds(gateway), record.yieldingTo == nil, ownerIsGone(record.greatest, now: now) else { return }
        let epoch = (record.greatest?.epoch ?? 0) + 1
        if record.linked {
            // A link and no owner: the link holder wins (it is not lapsed: it is us).
            publish(OwnerClaim(device: device, gateway: gateway, epoch: epoch, linked: true), into: &record, now: now, actions: &actions)
            return
        }
        // The bid must have been out for `settle`, so that the bids of gateways that heard the
        // device at the same moment have arrived and the best of them is the one that claims.
        guard record.score != nil, let since = record.bidPublishedSince, now >= since + configuration.settle,
              isBestLiveBidder(for: device, now: now)
        else { return }
        publish(OwnerClaim(device: device, gateway: gateway, epoch: epoch, linked: false), into: &record, now: now, actions: &actions)
    }

    /// Rule 4: the owner hands the device over once another live gateway's bid has beaten its
    /// own by `margin` for `dwell`.
    private func handOverIfBeaten(
        _ record: inout DeviceRecord, device: DeviceID, now: MonotonicInstant, actions: inout [OwnershipAction]
    ) {
        guard record.holds(gateway), record.yieldingTo == nil, isSettled(record, now: now),
              let challenger = bestChallenger(for: device, now: now)
        else {
            record.challengedSince = nil
            return
        }
        let since = record.challengedSince ?? now
        record.challengedSince = since
        guard now >= since + configuration.dwell else { return }
        // Release first, publish the successor's claim once the link is down (finishHandoff):
        // the successor connects only after that, so there is no moment with two links.
        record.yieldingTo = challenger
        finishHandoff(&record, device: device, now: now, actions: &actions)
    }

    /// Rule 9: an owner that neither hears nor holds the device lets it go after `lease`, so a
    /// gateway that hears it can claim it.
    private func releaseIfGone(
        _ record: inout DeviceRecord, device: DeviceID, now: MonotonicInstant, actions: inout [OwnershipAction]
    ) {
        guard record.holds(gateway), record.yieldingTo == nil, record.score == nil, !record.linked,
              now >= record.quietSince + configuration.lease, let greatest = record.greatest
        else { return }
        let release = OwnerClaim(device: device, gateway: nil, epoch: greatest.epoch + 1, linked: false)
        publish(release, into: &record, now: now, actions: &actions)
    }

    // MARK: - The link

    /// Tells the fleet to hold or drop the link, on every change.
    ///
    /// The owner starts a link only once its claim has stood for `settle` and it has been
    /// connected to the broker for `settle` (time for retained claims greater than its own to
    /// arrive). A link already up stays up without the broker (fail-static), and a link this
    /// gateway holds without a claim stays until the broker says another gateway holds it.
    private func updateLinkWanted(
        _ record: inout DeviceRecord, device: DeviceID, now: MonotonicInstant, actions: inout [OwnershipAction]
    ) {
        // Fail-static: without the broker the fleet keeps what it was told — a link being made
        // when the broker went away is finished, not dropped (a handoff under way still ends).
        if connectedSince == nil, record.yieldingTo == nil { return }
        let wanted: Bool
        if record.yieldingTo != nil {
            wanted = false
        } else if record.holds(gateway) {
            // Once started, an owner's link is wanted until the claim is lost or handed on: a
            // reconnection (or a new revision of its own claim) does not call off an attempt.
            let mayStart = connectedSince.map { now >= $0 + configuration.settle } ?? false
            wanted = record.linked || record.wanted || (isSettled(record, now: now) && mayStart)
        } else if let greatest = record.greatest, greatest.gateway != nil, greatest.linked {
            wanted = false
        } else {
            wanted = record.linked
        }
        guard wanted != record.wanted else { return }
        record.wanted = wanted
        actions.append(wanted ? .acquire(device) : .release(device))
    }

    func isSettled(_ record: DeviceRecord, now: MonotonicInstant) -> Bool {
        guard let since = record.heldSince else { return false }
        return now >= since + configuration.settle
    }

    // MARK: - Peers

    /// Nobody owns the device, its owner released it, or its owner lapsed.
    func ownerIsGone(_ claim: OwnerClaim?, now: MonotonicInstant) -> Bool {
        guard let owner = claim?.gateway else { return true }
        return isLapsed(owner, now: now)
    }

    /// Whether a gateway counts as gone: its Will came, or no heartbeat for `lease` on this
    /// gateway's clock. Time without the broker does not count (a peer is given a full lease
    /// from our reconnection), and this gateway never lapses for itself. A Will counts once it
    /// has stood for `settle` with this gateway connected: a broker that shuts down sends every
    /// client's Will as it drops them, and our own connection's end (`brokerLost`, which forgets
    /// Wills) comes right after.
    public func isLapsed(_ peer: GatewayID, now: MonotonicInstant) -> Bool {
        guard peer != gateway, let since = connectedSince else { return false }
        guard let record = peers[peer] else { return now >= since + configuration.lease }
        if let offline = record.offlineSince, now >= offline + configuration.settle { return true }
        return now >= max(record.lastHeartbeat ?? since, since) + configuration.lease
    }

    /// Whether this gateway's published bid is the best among live gateways (ties to the
    /// greater gateway name).
    func isBestLiveBidder(for device: DeviceID, now: MonotonicInstant) -> Bool {
        guard let own = publishedBids[device] else { return false }
        for (peer, record) in peers {
            guard let bid = record.bids[device], !isLapsed(peer, now: now) else { continue }
            if bid.score > own.score || (bid.score == own.score && peer > gateway) { return false }
        }
        return true
    }

    /// The live gateway with the best bid, if it beats ours by more than `margin`.
    func bestChallenger(for device: DeviceID, now: MonotonicInstant) -> GatewayID? {
        let own = publishedBids[device]?.score ?? -Double.infinity
        var best: (peer: GatewayID, score: Double)?
        for (peer, record) in peers {
            guard let bid = record.bids[device], !isLapsed(peer, now: now), bid.score > own + configuration.margin else { continue }
            if let current = best, current.score > bid.score || (current.score == bid.score && current.peer > peer) { continue }
            best = (peer, bid.score)
        }
        return best?.peer
    }
}
