// bluetoothd and the adapters are not the device's fault: losing them releases what the device
// holds but records no failure, so budgets and the breaker only ever count the device's own
// behaviour.

extension DeviceStateMachine {
    mutating func adapterPowered(_ adapter: AdapterID, now: MonotonicInstant, _ effects: inout [DeviceEffect]) {
        poweredAdapters.insert(adapter)
        if state == .suspended(.noPoweredAdapter) { pursue(now: now, &effects) }
    }

    mutating func adapterUnpowered(_ adapter: AdapterID, now: MonotonicInstant, _ effects: inout [DeviceEffect]) {
        poweredAdapters.remove(adapter)
        if state == .asleep, standby == .pausing(adapter) {
            // Its slot was on that adapter: give it back and be placed anew.
            endStanding(&effects)
            waitForWake(now: now, &effects)
            return
        }
        if linkAdapter == adapter {
            teardown(.alreadyGone, attemptOutcome: .failed(.bluetoothOff), &effects)
            pursue(now: now, &effects)
            return
        }
        guard poweredAdapters.isEmpty else { return }
        switch state {
        case .resolving, .connecting(adapter: nil), .backingOff, .asleep:
            teardown(.release, attemptOutcome: .cancelled, &effects)
            pursue(now: now, &effects)
        default:
            break
        }
    }

    mutating func bluetoothdAppeared(now: MonotonicInstant, _ effects: inout [DeviceEffect]) {
        bluetoothdPresent = true
        if state == .suspended(.bluetoothdUnavailable) { pursue(now: now, &effects) }
    }

    mutating func bluetoothdVanished(now: MonotonicInstant, _ effects: inout [DeviceEffect]) {
        bluetoothdPresent = false
        // What bluetoothd knew went with it; the next one says again.
        isPaired = false
        sessionsHeld = false
        objectLostBeforeLink = false
        knownAdapter = nil
        // Its adapters went with it; they are announced again when it comes back.
        poweredAdapters = []
        // Resolve and attempt requests are still withdrawn: the central and the fleet gate count
        // them, and would otherwise leak a request per device on every bluetoothd restart.
        teardown(.alreadyGone, attemptOutcome: .cancelled, &effects)
        switch state {
        case .idle, .suspended(.gaveUp):
            // A bluetoothd restart is no reason to retry a device that needs an operator.
            break
        default:
            pursue(now: now, &effects)
        }
    }

    mutating func deviceFound(_ adapter: AdapterID, now: MonotonicInstant, _ effects: inout [DeviceEffect]) {
        knownAdapter = adapter
        needsRediscovery = false
        switch state {
        case .resolving:
            disarm(.resolve, &effects)
            effects.append(.stopResolve)
            state = .connecting(adapter: nil)
            effects.append(.requestAttempt)
        case .asleep where standby == .searching:
            // Found: wait for it with a pending Connect from now on.
            teardown(.release, attemptOutcome: .cancelled, &effects)
            waitForWake(now: now, &effects)
        case .suspended(.budgetExhausted):
            // Seeing the device again is better evidence than waiting out the cooldown.
            disarm(.suspension, &effects)
            pursue(now: now, &effects)
        default:
            break
        }
    }

    mutating func deviceLost(
        now: MonotonicInstant,
        random: inout some RandomNumberGenerator,
        _ effects: inout [DeviceEffect]
    ) {
        knownAdapter = nil
        // Its object, bond and notify sessions went with it (`RemoveDevice`, an expiry).
        isPaired = false
        sessionsHeld = false
        switch state {
        case .asleep:
            // Its object expired or was removed: look for it (no object, nothing to cancel).
            teardown(.alreadyGone, attemptOutcome: .cancelled, &effects)
            pursue(now: now, &effects)
        case .connecting(adapter: nil):
            teardown(.release, attemptOutcome: .cancelled, &effects)
            pursue(now: now, &effects)
        case .connecting(_?) where !objectLostBeforeLink:
            // There is no object left to cancel the attempt on.
            objectLostBeforeLink = true
            teardown(.alreadyGone, attemptOutcome: .cancelled, &effects)
            pursue(now: now, &effects)
        case .connecting(let adapter?):
            // A failed attempt, like any other the fleet may yet put down to its adapter or
            // bluetoothd.
            teardown(.alreadyGone, attemptOutcome: .failed(.gone), &effects)
            failExplainably(.gone, error: nil, endedOn: adapter, now: now, random: &random, &effects)
        case let linked where linked.isLinked && configuration.intermittent:
            intermittentLinkEnded(nil, now: now, random: &random, &effects)
        case .connecting, .discovering, .pairing, .ready, .degraded:
            teardown(.alreadyGone, attemptOutcome: .failed(.gone), &effects)
            fail(.gone, error: nil, now: now, random: &random, &effects)
        default:
            break
        }
    }

    mutating func policyUpdated(wanted: Bool, now: MonotonicInstant, _ effects: inout [DeviceEffect]) {
        isWanted = wanted
        guard wanted else {
            objectLostBeforeLink = false
            teardown(.release, attemptOutcome: .cancelled, &effects)
            state = .idle
            return
        }
        switch state {
        case .idle:
            pursue(now: now, &effects)
        case .suspended(.gaveUp):
            // Someone asked for the device again: that is the "operator acted" a give-up waits for.
            reconnect.reset()
            pursue(now: now, &effects)
        default:
            break
        }
    }
}
