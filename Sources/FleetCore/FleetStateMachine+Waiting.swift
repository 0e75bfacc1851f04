// Why a wanted device without a link is not being connected, in the words status shows beside
// its state (`connecting: noFreeSlot`): a pinned strap sitting in `idle` or `connecting` for
// minutes otherwise says nothing about what it waits for.

extension FleetStateMachine {
    /// What a device the fleet holds back waits for.
    public enum WaitingReason: String, Sendable, Hashable, CaseIterable {
        /// `disconnect` holds it until `reconnect` or `pin`.
        case held
        /// Several gateways share the fleet and this one was not given the device (another owns
        /// it, or nobody yet).
        case awaitingOwnership
        /// It asked for an attempt, and no usable adapter (powered, selected) has heard it.
        case notHeard
        /// It asked for an attempt, is heard, and every slot that reaches it is taken by devices
        /// that rank above it (pinned links, or pool devices with a better score).
        case noFreeSlot
        /// It has a slot and waits for its adapter's one attempt at a time (or the attempt
        /// rate's next token).
        case attemptTurn
    }

    /// Why `id` waits, or nil when it does not (linked, attempting, resting, or not wanted).
    public func waitingReason(of id: DeviceID) -> WaitingReason? {
        guard let device = devices[id], device.link == .disconnected else { return nil }
        if device.held { return .held }
        if device.awaitingOwnership { return .awaitingOwnership }
        guard device.wantsAttempt else { return nil }
        // Placed (heard, or connectable by address on its last adapter): its turn comes.
        if policy.reservations[id] != nil { return .attemptTurn }
        // Heard only on adapters that are off or not selected offers nothing to connect through.
        if !device.objects.contains(where: { isUsable($0.adapter) }) { return .notHeard }
        return .noFreeSlot
    }
}
