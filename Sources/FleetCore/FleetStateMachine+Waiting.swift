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
        /// It asked for an attempt, and no adapter has heard it (nothing to connect through).
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
        if device.objects.isEmpty { return .notHeard }
        return policy.reservations[id] == nil ? .noFreeSlot : .attemptTurn
    }
}
