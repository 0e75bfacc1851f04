// Bonding. A measurement device (blood pressure, weight, glucose) encrypts its measurements, so
// the link must be bonded before it sends them: the machine pairs when the device's class says
// so, or when a read or subscription answers that it needs encryption or authentication (once
// per link), and then does what waited for it. Pairing failures have a class of their own: a
// wrong key or a refusal cannot heal by retrying, so they wait for an operator (`pair`,
// `reconnect`, a reload that changes the device), while a timeout or a cancellation is retried
// within the class's small budget.

extension DeviceStateMachine {
    /// Current Time (0x2A2B), in BlueZ's spelling: what `setTime` writes.
    public static let currentTimeCharacteristic = "00002a2b-0000-1000-8000-00805f9b34fb"

    /// Enters `pairing` on a link whose setup is under way.
    mutating func beginPairing(now: MonotonicInstant, _ effects: inout [DeviceEffect]) {
        link.pairingAttempted = true
        disarm(.subscribe, &effects)
        state = .pairing
        effects.append(.pair)
        arm(.pairing, at: now + configuration.timeouts.pairing, &effects)
    }

    mutating func pairingSucceeded(now: MonotonicInstant, _ effects: inout [DeviceEffect]) {
        guard state == .pairing else { return }
        disarm(.pairing, &effects)
        isPaired = true
        state = .discovering
        let path = notifyPath
        for characteristic in configuration.readOnConnect where link.readsAfterPairing.contains(characteristic) {
            link.pendingReads.insert(characteristic)
            effects.append(.read(characteristic: characteristic))
        }
        for characteristic in configuration.subscriptions where link.subscriptionsAfterPairing.contains(characteristic) {
            link.pendingSubscriptions.insert(characteristic)
            effects.append(.subscribe(characteristic: characteristic, via: path))
        }
        link.readsAfterPairing = []
        link.subscriptionsAfterPairing = []
        if link.clockAfterPairing {
            link.clockAfterPairing = false
            link.clockPending = true
            effects.append(.writeCurrentTime)
        }
        if link.pendingReads.isEmpty && link.pendingSubscriptions.isEmpty && !link.clockPending {
            finishSetup(now: now, &effects)
        } else {
            arm(.subscribe, at: now + configuration.timeouts.subscribe, &effects)
        }
    }

    mutating func pairingFailed(
        _ failure: DeviceEvent.Failure?,
        now: MonotonicInstant,
        random: inout some RandomNumberGenerator,
        _ effects: inout [DeviceEffect]
    ) {
        guard state == .pairing else { return }
        teardown(.release, attemptOutcome: .cancelled, &effects)
        countPairingFailure(failure, now: now, random: &random, &effects)
    }

    /// A failed bonding, after teardown: a wrong key or a refusal waits for an operator; any
    /// other takes the backoff within the `pairing` budget.
    mutating func countPairingFailure(
        _ failure: DeviceEvent.Failure?,
        now: MonotonicInstant,
        random: inout some RandomNumberGenerator,
        _ effects: inout [DeviceEffect]
    ) {
        let kind = failure.map(BlueZErrorClassifier.classifyPairing) ?? .timedOut
        guard kind.needsOperator else {
            fail(.pairing, error: failure, now: now, random: &random, &effects)
            return
        }
        // Counted like any failure, but not retried: the same key would fail the same way.
        effects.append(.emit(.failed(.pairing, error: failure, session: session)))
        explainableFailure = nil
        objectLostBeforeLink = false
        _ = reconnect.recordFailure(.pairing, now: now, random: &random)
        state = .suspended(.gaveUp(.pairing))
    }

    /// Whether a failed read or subscription is one bonding would cure, and bonding has not been
    /// tried on this link yet.
    func pairingWouldHelp(_ failure: DeviceEvent.Failure) -> Bool {
        !link.pairingAttempted && BlueZErrorClassifier.needsEncryption(failure)
    }
}
