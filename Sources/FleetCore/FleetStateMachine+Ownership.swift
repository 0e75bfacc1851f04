// The fleet's side of sharing devices with other gateways (`OwnershipMachine`, ARCHITECTURE.md
// "Several gateways"): while the ownership gate is on, a device this gateway has not been given
// is neither wanted (pinned) nor eligible (pool), so no attempt starts for it; a link already in
// hand stays until the ownership machine says to let it go, since the holder of a real link wins
// the claim and dropping it first would only cost a reconnection somewhere.

extension FleetStateMachine {
    /// Whether a pinned device should be wanted now: not held by an operator, and, with the
    /// ownership gate on, given to this gateway.
    func pinnedWanted(_ device: Device) -> Bool {
        device.pinned && !device.held && !device.awaitingOwnership
    }

    /// Whether a pinned device waits, unlinked, to be given: the gateway must keep hearing it
    /// (discovery) to bid for it, since it is not looked for as a wanted device is.
    var listensForOwnership: Bool {
        ownershipGateEnabled
            && devices.values.contains { $0.pinned && !$0.held && $0.awaitingOwnership && $0.link == .disconnected }
    }

    /// Turns the ownership gate on or off. On — or on again, for a new ownership coordinator,
    /// which starts knowing nothing of what the last one gave — every device without a link
    /// (its attempt or pending Connect called off) waits to be given; off: nothing waits.
    mutating func setOwnershipGate(enabled: Bool, _ actions: inout [Action]) {
        guard enabled || ownershipGateEnabled else { return }
        ownershipGateEnabled = enabled
        for id in devices.keys.sorted() {
            guard let device = devices[id] else { continue }
            let linked = if case .connected = device.link { true } else { false }
            setAwaitingOwnership(id, enabled && !linked, &actions)
        }
        requestEvaluation(&actions)
    }

    /// The ownership machine gave the device to this gateway (`linkAllowed`) or took it away.
    /// Ignored while the gate is off (a late decision from a coordinator being stopped).
    mutating func ownershipDecided(_ id: DeviceID, linkAllowed: Bool, _ actions: inout [Action]) {
        guard ownershipGateEnabled, devices[id] != nil else { return }
        setAwaitingOwnership(id, !linkAllowed, &actions)
        requestEvaluation(&actions)
    }

    private mutating func setAwaitingOwnership(_ id: DeviceID, _ awaiting: Bool, _ actions: inout [Action]) {
        guard let device = devices[id], device.awaitingOwnership != awaiting else { return }
        devices[id]?.awaitingOwnership = awaiting
        // Pool devices follow the next evaluation (the gate makes them ineligible).
        guard device.pinned, !device.held else { return }
        let wanted = !awaiting
        guard device.wanted != wanted else { return }
        devices[id]?.wanted = wanted
        if running { actions.append(.deliver(id, .policyUpdated(wanted: wanted))) }
    }
}

/// What this gateway knows of one device that the ownership machine bids with.
public struct OwnershipObservation: Hashable, Sendable {
    /// The device's link is up here.
    public var linked: Bool
    /// What its bid is made of; nil while no adapter here hears it and it has no link.
    public var bid: OwnershipBidInputs?

    public init(linked: Bool, bid: OwnershipBidInputs?) {
        self.linked = linked
        self.bid = bid
    }
}

extension FleetStateMachine {
    /// Every device this gateway could connect, as the ownership machine sees it. A device held
    /// by `disconnect` is observed like any other: its owner keeps the claim (and the fleet keeps
    /// it off), so the hold is not undone by another gateway taking it. A device is heard while some adapter's object reports an RSSI —
    /// bluetoothd clears it when discovery stops — or while it is linked here (a linked device
    /// stops advertising; its last advertised RSSI stands for it). A device this gateway could
    /// not link for want of a free slot is not bid for: its owner lets it go (rule 9) and
    /// a gateway with room can take it.
    public func ownershipObservations() -> [DeviceID: OwnershipObservation] {
        // Slots without a link (attempts under way count as free: each is for a device this
        // gateway owns, whose own bid is what matters).
        var linked: [AdapterID: Int] = [:]
        for device in devices.values { if case .connected(let adapter, _) = device.link { linked[adapter, default: 0] += 1 } }
        var freeSlots = 0
        for (id, adapter) in adapters where adapter.selected && adapter.powered {
            freeSlots += max(0, slots(of: id) - linked[id, default: 0])
        }
        var observations: [DeviceID: OwnershipObservation] = [:]
        for (id, device) in devices {
            let linked = if case .connected = device.link { true } else { false }
            let heardRSSI = device.objects.compactMap(\.rssi).max()
            let rssi = heardRSSI ?? (linked ? device.lastRSSI.values.max() : nil)
            // The slot a device's link holds here is as good as free for its own bid: owner and
            // challenger compare what each would have for it.
            let ownSlot = linked ? 1 : 0
            var bid: OwnershipBidInputs?
            if heardRSSI != nil || linked, linked || freeSlots > 0 {
                bid = OwnershipBidInputs(
                    rssi: rssi ?? OwnershipObservation.unknownLinkRSSI, freeSlots: freeSlots + ownSlot,
                    recentFailures: device.recentFailures)
            }
            observations[id] = OwnershipObservation(linked: linked, bid: bid)
        }
        return observations
    }
}

extension OwnershipObservation {
    /// The RSSI a link bids with when no adapter ever reported one for its device (restored
    /// from the state file and linked before any advertisement was heard): a weak but usable
    /// signal, so the link holds unless a gateway that really hears the device does much better.
    public static let unknownLinkRSSI = -80
}

/// Turns the fleet's observations, taken again and again, into the ownership machine's inputs:
/// `linkChanged` on each change of a link, a reading each time a device is heard (its smoothed
/// RSSI follows every reading), `notHeard` once when it has gone quiet for `quietGrace` or left
/// the fleet. The grace spans a discovery restart — bluetoothd clears every RSSI when discovery
/// stops, and a device still in range reports again within an advertising interval — so a
/// refresh does not take a bid away and bring it back (peers would restart their dwell on it).
public struct OwnershipFeed: Sendable {
    public static let quietGrace: Duration = .seconds(3)
    private var last: [DeviceID: OwnershipObservation] = [:]
    /// Devices heard at the last report and silent since then (not yet said `notHeard`).
    private var quietSince: [DeviceID: MonotonicInstant] = [:]
    private var saidHeard: Set<DeviceID> = []
    /// The devices of the last observations that the ones before did not have (all of them at
    /// the first): a device the fleet removed and took back needs its grant again.
    public private(set) var appeared: Set<DeviceID> = []

    public init() {}

    public mutating func inputs(from observations: [DeviceID: OwnershipObservation], now: MonotonicInstant) -> [OwnershipInput] {
        var inputs: [OwnershipInput] = []
        appeared = Set(observations.keys).subtracting(last.keys)
        for id in Set(last.keys).union(observations.keys).sorted() {
            let linkedBefore = last[id]?.linked ?? false
            let linkedNow = observations[id]?.linked ?? false
            // The link first: a link that came up unasked is judged before the reading it brings.
            if linkedBefore != linkedNow { inputs.append(.linkChanged(id, linked: linkedNow)) }
            if let bid = observations[id]?.bid {
                inputs.append(.heard(id, bid))
                saidHeard.insert(id)
                quietSince[id] = nil
            } else if saidHeard.contains(id) {
                let since = quietSince[id] ?? now
                if observations[id] == nil || now >= since.advanced(by: Self.quietGrace) {
                    inputs.append(.notHeard(id))
                    saidHeard.remove(id)
                    quietSince[id] = nil
                } else {
                    quietSince[id] = since
                }
            }
        }
        last = observations
        return inputs
    }
}
