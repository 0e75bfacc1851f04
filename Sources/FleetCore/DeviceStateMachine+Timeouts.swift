extension DeviceStateMachine {
    /// The timers a device owns. The runtime keeps at most one timer per kind per device:
    /// scheduling a kind replaces any earlier one of the same kind.
    public enum TimerKind: String, Hashable, Sendable, CaseIterable {
        /// Bounds the search for a device bluetoothd does not know.
        case resolve
        /// Bounds one `Device1.Connect`.
        case connect
        /// Bounds the wait for `ServicesResolved`.
        case discovery
        /// Bounds reads-on-connect and subscriptions.
        case subscribe
        /// Bounds the oldest outstanding write.
        case write
        /// Ends a backoff.
        case backoff
        /// Ends a timed suspension (breaker cooldown, budget cooldown).
        case suspension
        /// Retries missing subscriptions while degraded.
        case recovery
        /// Bounds one bonding.
        case pairing
        /// Paces an intermittent device's pending `Connect`: the next one is sent when this fires.
        case standby
    }
}

// MARK: -

// A timer's firing is an event like any other, but only the armed generation counts: a timeout
// that raced with its cancellation must not act on a newer operation.

extension DeviceStateMachine {
    mutating func timeout(
        _ kind: TimerKind,
        _ generation: UInt64,
        now: MonotonicInstant,
        random: inout some RandomNumberGenerator,
        _ effects: inout [DeviceEffect]
    ) {
        guard armedTimers[kind] == generation else { return }
        armedTimers[kind] = nil
        switch kind {
        case .resolve:
            // Still not found: counts against the `gone` budget, and the retry resolves again.
            teardown(.release, attemptOutcome: .cancelled, &effects)
            fail(.gone, error: nil, now: now, random: &random, &effects)
        case .connect where state == .asleep:
            // bluetoothd still holds the pending Connect past its own bound: end it, send anew.
            pauseStandby(cancelling: true, now: now, &effects)
        case .standby:
            resumeStanding(now: now, &effects)
        case .pairing:
            pairingFailed(nil, now: now, random: &random, &effects)
        case .connect:
            guard case .connecting(let adapter?) = state else { return }
            teardown(.release, attemptOutcome: .failed(.transient), &effects)
            // Like every failed attempt, one the fleet may yet put down to its adapter or
            // bluetoothd (a Connect a power-off left unanswered).
            failExplainably(.transient, error: nil, endedOn: adapter, now: now, random: &random, &effects)
        case .discovery, .write:
            // Services that never resolve, or a write that never completes, mean a link that is
            // up in name only: drop it and reconnect.
            teardown(.release, attemptOutcome: .cancelled, &effects)
            fail(.transient, error: nil, now: now, random: &random, &effects)
        case .subscribe:
            for characteristic in configuration.readOnConnect where link.pendingReads.contains(characteristic) {
                effects.append(.emit(.setupProblem(characteristic: characteristic, error: nil, session: session)))
            }
            for characteristic in configuration.subscriptions where link.pendingSubscriptions.contains(characteristic) {
                effects.append(.emit(.setupProblem(characteristic: characteristic, error: nil, session: session)))
            }
            if link.clockPending {
                effects.append(.emit(.setupProblem(characteristic: Self.currentTimeCharacteristic, error: nil, session: session)))
            }
            finishSetup(now: now, &effects)
        case .backoff, .suspension:
            pursue(now: now, &effects)
        case .recovery:
            switch state {
            case .degraded(.subscriptionsIncomplete(let missing)):
                let path: DeviceEffect.NotifyPath = configuration.useFileDescriptorPath ? .acquireNotify : .startNotify
                for characteristic in missing {
                    effects.append(.subscribe(characteristic: characteristic, via: path))
                }
                arm(.recovery, at: now + configuration.timeouts.recoveryInterval, &effects)
            case .degraded(.writesFailing):
                // A quiet interval without further failures: the link gets the benefit of the
                // doubt, as a device that stops writing would otherwise stay degraded forever.
                link.consecutiveWriteFailures = 0
                settle(now: now, &effects)
            default:
                break
            }
        }
    }
}
