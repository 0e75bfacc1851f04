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

    /// Turns the ownership gate on or off. On: every device without a link waits to be given;
    /// off: nothing waits.
    mutating func setOwnershipGate(enabled: Bool, _ actions: inout [Action]) {
        guard ownershipGateEnabled != enabled else { return }
        ownershipGateEnabled = enabled
        for id in devices.keys.sorted() {
            guard let device = devices[id] else { continue }
            setAwaitingOwnership(id, enabled && device.link == .disconnected, &actions)
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
