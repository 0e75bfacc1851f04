// Several gateways hear the same wearables, and a BLE peripheral accepts one central at a time,
// so the gateways must agree which of them connects each device. They agree through the MQTT
// broker they already share, without a cluster protocol of their own: retained claims ordered
// by epoch, heartbeats and Last Wills for liveness, bids for who hears a device best. This is the
// pure core of that agreement; the runtime maps its messages onto topics and carries out its
// actions (ARCHITECTURE.md, "Several gateways: ownership through the broker").

/// What happened, as far as the ownership of devices is concerned.
public enum OwnershipInput: Hashable, Sendable {
    /// The MQTT connection is up and subscribed (retained claims and bids follow as messages).
    case brokerConnected
    /// The MQTT connection is gone; links stay as they are until it is back (fail-static).
    case brokerLost
    /// A claim from `<prefix>/device/<ADDR>/owner`, this gateway's own included.
    case claimReceived(OwnerClaim)
    /// A gateway's bids message: every device it hears, with its bid.
    case bidsReceived(GatewayID, [DeviceID: OwnershipBid])
    /// A gateway's heartbeat (`GatewayLiveness.alive == true`).
    case heartbeat(GatewayID)
    /// A gateway's Last Will (`GatewayLiveness.alive == false`).
    case gatewayOffline(GatewayID)
    /// The fleet hears the device here (an advertisement, or the link's RSSI while connected).
    case heard(DeviceID, OwnershipBidInputs)
    /// The fleet no longer hears the device here.
    case notHeard(DeviceID)
    /// The device's link here came up or went down (a refused attempt reports `linked: false`).
    case linkChanged(DeviceID, linked: Bool)
    /// The instant of the last `scheduleTick(at:)` has come.
    case tick
}

/// What the runtime must do next. Publishing is asked for only while the broker is connected.
public enum OwnershipAction: Hashable, Sendable {
    /// Publish retained, QoS 1, on `<prefix>/device/<ADDR>/owner`.
    case publishClaim(OwnerClaim)
    /// Publish this gateway's bids (`OwnershipBids`), retained, on its own topic.
    case publishBids([DeviceID: OwnershipBid])
    /// Publish this gateway's heartbeat (`GatewayLiveness`, alive), not retained.
    case publishHeartbeat
    /// Connect the device here and keep it connected (the fleet retries on its own) until
    /// `release`.
    case acquire(DeviceID)
    /// Disconnect the device here and stop trying to connect it; report the link's end with
    /// `linkChanged(device, linked: false)`.
    case release(DeviceID)
    /// Deliver `tick` at this instant; replaces any earlier request.
    case scheduleTick(at: MonotonicInstant)
}

/// Decides which devices this gateway connects, when several gateways share one fleet through
/// an MQTT broker.
///
/// Rules (ARCHITECTURE.md has the why of each):
/// 1. Claims are ordered by `OwnerClaim.precedence`; the greatest seen wins. A gateway that sees
///    a claim lower than the winning one it is responsible for (it is named in it, or wrote it)
///    re-publishes the winner, so the retained record converges too.
/// 2. A connected gateway past its resync grace claims a device it hears (epoch + 1) when the
///    device has no owner, was released, or its owner lapsed (Last Will, or no heartbeat for
///    `lease` on this gateway's clock), if it is the best live bidder and its bid has been out
///    for `settle`.
/// 3. It connects (`acquire`) only once its claim came back and stood for `settle`; a greater
///    claim for another gateway stops it at once (`release`).
/// 4. Only the owner hands a device over: after another live gateway's bid beat its own by
///    `margin` for `dwell`, it releases, and once the link is down it publishes the successor's
///    claim (epoch + 1), which the successor treats as its own.
/// 5. Fail-static: without the broker, links stay and nothing new is claimed or started; after
///    reconnecting, the gateway re-publishes its claims and waits `resyncGrace` before claiming.
///    The holder of the real link wins: a gateway that holds a link while the greatest claim
///    names nobody, or a gateway that is not linked, claims it above that (epoch + 1, linked);
///    if the greatest claim names a linked gateway, it releases.
/// 6. A broker restart hands nothing over: it is rule 5 for every gateway at once.
/// 7. The owner keeps `linked` truthful: a new revision of its claim when its link changes.
/// 8. Preferred gateways bid with a bonus (`OwnershipScoring.preferredBonus`).
/// 9. An owner that has neither heard nor held the device for `lease` releases it.
///
/// Guarantees, checked by the property tests over a simulated broker: once messages stop being
/// lost, every gateway ends with the same greatest claim per device, naming a live gateway that
/// hears the device and holds its link; no two gateways want one device's link at once, provided every message
/// arrives within `settle / 2`, a live gateway's heartbeats never miss `lease`, and no gateway
/// loses the broker while keeping its links (a partition: fail-static then trades a refused
/// attempt elsewhere for links that stay up, and the link holder wins on reconnection).
///
/// A value type with no I/O and no clock: every input carries its instant.
public struct OwnershipMachine: Sendable, Hashable {
    public let gateway: GatewayID
    public private(set) var configuration: OwnershipConfiguration
    /// When the current broker connection began; nil while disconnected.
    public private(set) var connectedSince: MonotonicInstant?
    var peers: [GatewayID: Peer] = [:]
    var devices: [DeviceID: DeviceRecord] = [:]
    var lastHeartbeatAt: MonotonicInstant?
    /// Set by a reconnection (and by our own Will): the next evaluation publishes at once.
    var heartbeatOwed = false
    var bidsOwed = false
    var lastBidsAt: MonotonicInstant?
    /// What this gateway last published: it judges by its published bids, as its peers do, so
    /// that every gateway compares the same numbers.
    var publishedBids: [DeviceID: OwnershipBid] = [:]
    /// Devices whose bid moved since the last bids message (kept as readings come, so that a
    /// reading costs no pass over every device).
    var movedBids: Set<DeviceID> = []
    var scheduledTick: MonotonicInstant?

    /// What this gateway knows of another gateway.
    struct Peer: Hashable, Sendable {
        var lastHeartbeat: MonotonicInstant?
        /// When its Last Will came (no heartbeat since); nil while it is not known offline.
        var offlineSince: MonotonicInstant?
        var bids: [DeviceID: OwnershipBid] = [:]
    }

    /// What this gateway knows of one device.
    struct DeviceRecord: Hashable, Sendable {
        var greatest: OwnerClaim?
        /// This gateway wrote `greatest` (a claim, a release or a handoff to a successor).
        var authoredGreatest = false
        /// When `greatest`, naming this gateway, came back from the broker; settle counts from it.
        var heldSince: MonotonicInstant?
        var reading: OwnershipBidInputs?
        var smoothedRSSI: Double?
        /// This gateway's current bid; nil while it does not hear the device.
        var score: Double?
        var linked = false
        /// Whether the last `acquire`/`release` was `acquire`.
        var wanted = false
        /// Released locally for a handoff; the successor's claim goes out once the link is down.
        var yieldingTo: GatewayID?
        /// Since when some live gateway's bid has beaten ours by `margin`.
        var challengedSince: MonotonicInstant?
        /// The last instant the device was heard or linked here, or became ours.
        var quietSince: MonotonicInstant
        /// Since when our published bids have included the device.
        var bidPublishedSince: MonotonicInstant?
        /// A lower claim arrived after the one we answer for: write ours again.
        var republishDue = false
        var lastPublishedAt: MonotonicInstant?

        init(now: MonotonicInstant) { quietSince = now }

        func holds(_ gateway: GatewayID) -> Bool { greatest?.gateway == gateway }
    }

    public init(gateway: GatewayID, configuration: OwnershipConfiguration = OwnershipConfiguration()) {
        self.gateway = gateway
        self.configuration = configuration
    }

    /// Applies a reloaded configuration; what is known of claims, peers and links stays.
    public mutating func reconfigure(_ configuration: OwnershipConfiguration) {
        self.configuration = configuration
    }

    // MARK: - Events

    public mutating func handle(_ input: OwnershipInput, now: MonotonicInstant) -> [OwnershipAction] {
        var actions: [OwnershipAction] = []
        var affected: DeviceID?
        var unaskedLink: DeviceID?
        switch input {
        case .brokerConnected:
            brokerConnected(now: now, actions: &actions)
        case .brokerLost:
            connectedSince = nil
            for device in devices.keys { devices[device]?.challengedSince = nil }
            // A broker going down sends the Will of every client it drops, ours included, just
            // before our own connection ends: a Will that has not stood while we were connected
            // says nothing of the peer. A peer really gone is offline again on reconnection (its
            // retained `offline`), or lapses after a lease of silence.
            for peer in peers.keys { peers[peer]?.offlineSince = nil }
        case .claimReceived(let claim):
            receive(claim, now: now, actions: &actions)
            affected = claim.device
        case .bidsReceived(let peer, let bids):
            guard peer != gateway else { break }
            peers[peer, default: Peer()].bids = bids
        case .heartbeat(let peer):
            guard peer != gateway else { break }
            peers[peer, default: Peer()].lastHeartbeat = now
            peers[peer, default: Peer()].offlineSince = nil
        case .gatewayOffline(let peer):
            // Our own Will: the broker ended an old session of ours (a restart, a takeover).
            // Peers now count us offline until our next heartbeat, so send it at once.
            if peer == gateway {
                heartbeatOwed = true
            } else if peers[peer]?.offlineSince == nil {
                peers[peer, default: Peer()].offlineSince = now
            }
        case .heard(let device, let reading):
            heard(device, reading: reading, now: now)
            affected = device
        case .notHeard(let device):
            var record = devices[device] ?? DeviceRecord(now: now)
            record.reading = nil
            record.smoothedRSSI = nil
            record.score = nil
            record.quietSince = now
            devices[device] = record
            noteBid(of: device, score: nil)
            affected = device
        case .linkChanged(let device, let linked):
            var record = devices[device] ?? DeviceRecord(now: now)
            if linked, !record.linked, !record.wanted { unaskedLink = device }
            record.linked = linked
            record.quietSince = now
            devices[device] = record
            affected = device
        case .tick:
            // The runtime's timer has fired: whatever comes next needs a new request.
            scheduledTick = nil
        }
        publishHeartbeatIfDue(now: now, actions: &actions)
        publishBidsIfDue(now: now, actions: &actions)
        if let affected {
            evaluate(affected, now: now, actions: &actions)
        } else {
            for device in devices.keys.sorted() { evaluate(device, now: now, actions: &actions) }
        }
        // A link the fleet made without being asked (or finished after a release) that the rules
        // do not keep: say so, since no `acquire` will flip to `release` for it.
        // Not while the broker is away: a link the fleet adopted before the first connection (a
        // restart that found links up) is judged once the claims are known.
        if let device = unaskedLink, connectedSince != nil, devices[device]?.wanted == false { actions.append(.release(device)) }
        scheduleNextTick(now: now, actions: &actions)
        return actions
    }

    private mutating func heard(_ device: DeviceID, reading: OwnershipBidInputs, now: MonotonicInstant) {
        var record = devices[device] ?? DeviceRecord(now: now)
        let scoring = configuration.scoring
        let smoothed = scoring.smoothed(previous: record.smoothedRSSI, reading: reading.rssi)
        record.reading = reading
        record.smoothedRSSI = smoothed
        record.score = scoring.score(
            smoothedRSSI: smoothed, freeSlots: reading.freeSlots, recentFailures: reading.recentFailures,
            preferred: configuration.preferredGateways[device]?.contains(gateway) ?? false)
        record.quietSince = now
        devices[device] = record
        noteBid(of: device, score: record.score)
    }

    private mutating func noteBid(of device: DeviceID, score: Double?) {
        if bidMoved(device, score: score) { movedBids.insert(device) } else { movedBids.remove(device) }
    }

    private mutating func brokerConnected(now: MonotonicInstant, actions: inout [OwnershipAction]) {
        connectedSince = now
        heartbeatOwed = true
        bidsOwed = true
        // Re-publish every claim this gateway answers for: the broker may have lost its retained
        // store, and a claim of ours that went out just before the loss may never have arrived.
        for device in devices.keys.sorted() {
            guard var record = devices[device], var claim = record.greatest,
                  claim.gateway == gateway || record.authoredGreatest
            else { continue }
            if claim.gateway == gateway, claim.linked != record.linked {
                claim.revision += 1
                claim.linked = record.linked
                record.greatest = claim
            }
            record.republishDue = false
            record.lastPublishedAt = now
            devices[device] = record
            actions.append(.publishClaim(claim))
        }
    }

    /// Keeps the greatest claim (rule 1) and notes when our own claim came back.
    private mutating func receive(_ claim: OwnerClaim, now: MonotonicInstant, actions: inout [OwnershipAction]) {
        var record = devices[claim.device] ?? DeviceRecord(now: now)
        defer { devices[claim.device] = record }
        guard let greatest = record.greatest, claim.precedence <= greatest.precedence else {
            let sameClaim = record.greatest.map(claim.isSameClaim) ?? false
            record.greatest = claim
            record.authoredGreatest = false
            record.republishDue = false
            // Only the named gateway writes its claim with `linked`: a new one is a sign of life
            // as good as a heartbeat. Without it, a gateway that missed the heartbeats of a
            // linked owner (its Will came late, after a partition) and a linked owner would
            // claim over each other until the next heartbeat.
            if claim.linked, let named = claim.gateway, named != gateway {
                peers[named, default: Peer()].lastHeartbeat = now
                peers[named, default: Peer()].offlineSince = nil
            }
            if claim.gateway == gateway {
                if !sameClaim || record.heldSince == nil { record.heldSince = now }
                if !sameClaim { record.quietSince = now }
            } else {
                record.heldSince = nil
                record.challengedSince = nil
            }
            return
        }
        if claim.isSameClaim(as: greatest), claim.gateway == gateway, record.heldSince == nil {
            record.heldSince = now
        }
        // A lower claim, or an older revision of the winner, may now be what the broker retains
        // (a broker cluster can reorder publishers): the gateway that answers for the winner
        // writes it again (`republishIfDue`).
        if claim.precedence < greatest.precedence, greatest.gateway == gateway || record.authoredGreatest {
            record.republishDue = true
        }
    }

    // MARK: - Status

    /// The device's owner as this gateway knows it; nil when nobody owns it (never claimed, or
    /// released).
    public func owner(of device: DeviceID) -> (gateway: GatewayID, epoch: UInt64, linked: Bool)? {
        guard let claim = devices[device]?.greatest, let owner = claim.gateway else { return nil }
        return (owner, claim.epoch, claim.linked)
    }

    /// The greatest claim seen for the device, releases included.
    public func greatestClaim(for device: DeviceID) -> OwnerClaim? { devices[device]?.greatest }

    /// Whether the greatest claim for the device names this gateway.
    public func isOwnedHere(_ device: DeviceID) -> Bool { devices[device]?.holds(gateway) ?? false }

    /// Whether this gateway has asked the fleet to connect the device (`acquire` without a later
    /// `release`).
    public func wantsLink(to device: DeviceID) -> Bool { devices[device]?.wanted ?? false }

    /// The devices this gateway knows anything about, in address order.
    public var knownDevices: [DeviceID] { devices.keys.sorted() }

    public var isConnectedToBroker: Bool { connectedSince != nil }

    /// Connected to the broker for at least `resyncGrace`: the claims it kept have been heard and
    /// this gateway may claim (rule 2).
    public func isPastResyncGrace(now: MonotonicInstant) -> Bool {
        connectedSince.map { now >= $0 + configuration.resyncGrace } ?? false
    }
}
