extension DeviceStateMachine {
    /// What has happened on the current link; starts empty on every link.
    struct LinkProgress: Hashable, Sendable {
        var servicesKnown = false
        var pendingReads: Set<String> = []
        var pendingSubscriptions: Set<String> = []
        var failedSubscriptions: Set<String> = []
        var setupFinished = false
        var outstandingWrites = 0
        var consecutiveWriteFailures = 0
        /// Bonding was tried on this link (it is tried at most once per link).
        var pairingAttempted = false
        /// The agent gave bluetoothd this device's passkey on this link (`pairingKeyGiven`).
        var keyGiven = false
        /// What waits for the bonding: reads and subscriptions that answered that they need
        /// encryption, or (a class that bonds first) all of them.
        var readsAfterPairing: Set<String> = []
        var subscriptionsAfterPairing: Set<String> = []
        /// The Current Time write of this link's setup is in flight.
        var clockPending = false
        /// The Current Time write waits for the bond (it answered that it needs encryption, or
        /// the class bonds first).
        var clockAfterPairing = false
    }
}

// MARK: -

// From a granted attempt to a usable link: connect, wait for services, check the required ones,
// read and subscribe, then settle in `ready` or `degraded`.

extension DeviceStateMachine {
    mutating func attemptGranted(_ adapter: AdapterID, now: MonotonicInstant, _ effects: inout [DeviceEffect]) {
        if state == .asleep, standby == .awaitingGrant, isWanted {
            standbyGranted(adapter, now: now, &effects)
            return
        }
        guard state == .connecting(adapter: nil), isWanted else {
            // The request was withdrawn while the grant was on its way: hand the slot back.
            effects.append(.attemptFinished(adapter: adapter, outcome: .cancelled))
            return
        }
        session += 1
        linkAdapter = adapter
        state = .connecting(adapter: adapter)
        effects.append(.connect(adapter: adapter))
        arm(.connect, at: now + configuration.timeouts.connect, &effects)
    }

    mutating func connected(now: MonotonicInstant, _ effects: inout [DeviceEffect]) {
        switch state {
        case .connecting(let adapter?):
            disarm(.connect, &effects)
            objectLostBeforeLink = false
            effects.append(.attemptFinished(adapter: adapter, outcome: .connected))
            beginLink(now: now, &effects)
        case .discovering, .pairing, .ready, .degraded:
            break
        case .asleep:
            // The pending Connect found the device awake (or it connected on its own). Its
            // standing slot becomes the link's (the fleet hears the link from bluetoothd).
            disarm(.connect, &effects)
            disarm(.standby, &effects)
            if standby == .searching { effects.append(.stopResolve) }
            if standby == .awaitingGrant { effects.append(.withdrawAttemptRequest) }
            standby = .none
            objectLostBeforeLink = false
            linkAdapter = linkAdapter ?? knownAdapter
            beginLink(now: now, &effects)
        case .idle:
            // A link nobody wants (a cancelled connect that completed anyway) holds a slot the
            // pool counts on.
            effects.append(.disconnect)
        case .resolving, .connecting(adapter: nil), .backingOff, .suspended:
            guard isWanted else { return }
            // The link came up without our attempt (it survived a daemon restart, or BlueZ
            // reconnected on its own): adopt it rather than tear down a working connection.
            teardown(.release, attemptOutcome: .cancelled, &effects)
            session += 1
            objectLostBeforeLink = false
            linkAdapter = knownAdapter
            beginLink(now: now, &effects)
        }
    }

    mutating func connectFailed(
        _ failure: DeviceEvent.Failure,
        now: MonotonicInstant,
        random: inout some RandomNumberGenerator,
        _ effects: inout [DeviceEffect]
    ) {
        if state == .asleep, case .connecting = standby {
            standbyConnectFailed(failure, now: now, random: &random, &effects)
            return
        }
        guard case .connecting(let adapter?) = state else { return }
        if failure.kind == .unknownObject, !objectLostBeforeLink {
            // The object went before the call reached it (its removal may still be on its way
            // to us): as `deviceLost` during the attempt, the device is looked for again.
            objectLostBeforeLink = true
            teardown(.alreadyGone, attemptOutcome: .cancelled, &effects)
            knownAdapter = nil
            pursue(now: now, &effects)
            return
        }
        let failureClass = BlueZErrorClassifier.classify(failure)
        teardown(.alreadyGone, attemptOutcome: .failed(failureClass), &effects)
        // The reply can overtake the news of its cause: bluetoothd answers a Connect its
        // adapter's power-off (or its own exit) ended before the fleet hears of either.
        failExplainably(failureClass, error: failure, endedOn: adapter, now: now, random: &random, &effects)
    }

    /// The attempt could not start: no object on the granted adapter, and no way to connect by
    /// address. The slot goes back unused, no failure is recorded, and the device is looked for.
    mutating func connectNeedsDiscovery(now: MonotonicInstant, _ effects: inout [DeviceEffect]) {
        if state == .asleep, case .connecting = standby {
            endStanding(&effects)
            knownAdapter = nil
            waitForWake(now: now, &effects)
            return
        }
        guard case .connecting(_?) = state else { return }
        teardown(.alreadyGone, attemptOutcome: .cancelled, &effects)
        knownAdapter = nil
        pursue(now: now, &effects)
    }

    mutating func disconnected(
        _ reason: DeviceEvent.Failure?,
        now: MonotonicInstant,
        random: inout some RandomNumberGenerator,
        _ effects: inout [DeviceEffect]
    ) {
        // During a connect, the Connect reply (or the connect timer) reports the outcome.
        guard state.isLinked else { return }
        if link.keyGiven, !link.servicesKnown, state != .pairing {
            // A bonding bluetoothd started itself (the device asked for security as it
            // connected) used the passkey, and the link ended before anything else: the host ends
            // a link whose pairing failed (0x05) — with a passkey given, most likely the wrong
            // one. Counted as that, so the key is not tried again at every wake.
            teardown(.alreadyGone, attemptOutcome: .failed(.pairing), &effects)
            let failure = DeviceEvent.Failure(
                .authenticationFailed, message: "the link ended during a bonding bluetoothd started, after the agent gave the passkey")
            countPairingFailure(failure, now: now, random: &random, &effects)
            return
        }
        if configuration.intermittent {
            intermittentLinkEnded(reason, now: now, random: &random, &effects)
            return
        }
        let adapter = linkAdapter
        let failureClass = BlueZErrorClassifier.classifyDisconnect(reason)
        teardown(.alreadyGone, attemptOutcome: .failed(failureClass), &effects)
        if reason == nil, let adapter {
            // BlueZ 5.66 reports a link its adapter's power-off or bluetoothd's exit ended just as
            // it reports radio loss, and names the cause only afterwards (`Powered` false, or
            // leaving the bus): recorded now, so that a real loss is retried at once, and taken
            // back if the fleet learns that cause within its window.
            failExplainably(failureClass, error: reason, endedOn: adapter, endedALink: true, now: now, random: &random, &effects)
        } else {
            fail(failureClass, error: reason, now: now, random: &random, &effects)
        }
    }

    mutating func servicesResolved(
        _ services: Set<String>,
        _ characteristics: Set<String>,
        now: MonotonicInstant,
        random: inout some RandomNumberGenerator,
        _ effects: inout [DeviceEffect]
    ) {
        guard state == .discovering, !link.servicesKnown else { return }
        disarm(.discovery, &effects)
        link.servicesKnown = true
        let servicesChanged = !services.isSubset(of: servicesSeen)
        servicesSeen.formUnion(services)
        let settingUpNothing = configuration.readOnConnect.isEmpty && configuration.subscriptions.isEmpty
        let missingService = !configuration.requiredServices.isSubset(of: services)
        let missingCharacteristic = !configuration.requiredCharacteristics.isSubset(of: characteristics)
        // One persist per reduce: when setup completes right away, finishSetup records it all.
        if servicesChanged && (missingService || missingCharacteristic || !settingUpNothing) {
            effects.append(.persist(storeUpdate(connectedNow: false)))
        }
        if missingService || missingCharacteristic {
            teardown(.release, attemptOutcome: .cancelled, &effects)
            let missing = Self.missingGATT(
                services: configuration.requiredServices.subtracting(services),
                characteristics: configuration.requiredCharacteristics.subtracting(characteristics))
            fail(.protocol, error: missing, now: now, random: &random, &effects)
            return
        }
        if configuration.bond, !isPaired {
            // Its measurements are encrypted: nothing is read or subscribed before the bond.
            link.readsAfterPairing = Set(configuration.readOnConnect)
            link.subscriptionsAfterPairing = Set(configuration.subscriptions)
            link.clockAfterPairing = configuration.setTime
            beginPairing(now: now, &effects)
            return
        }
        if configuration.setTime {
            link.clockPending = true
            effects.append(.writeCurrentTime)
        }
        let path: DeviceEffect.NotifyPath = configuration.useFileDescriptorPath ? .acquireNotify : .startNotify
        for characteristic in configuration.readOnConnect {
            link.pendingReads.insert(characteristic)
            effects.append(.read(characteristic: characteristic))
        }
        for characteristic in configuration.subscriptions {
            link.pendingSubscriptions.insert(characteristic)
            effects.append(.subscribe(characteristic: characteristic, via: path))
        }
        if link.pendingReads.isEmpty && link.pendingSubscriptions.isEmpty && !link.clockPending {
            finishSetup(now: now, &effects)
        } else {
            arm(.subscribe, at: now + configuration.timeouts.subscribe, &effects)
        }
    }

    mutating func clockWritten(now: MonotonicInstant, _ effects: inout [DeviceEffect]) {
        guard isSettingUp, link.clockPending else { return }
        link.clockPending = false
        advance(now: now, &effects)
    }

    mutating func clockWriteFailed(_ failure: DeviceEvent.Failure, now: MonotonicInstant, _ effects: inout [DeviceEffect]) {
        guard isSettingUp, link.clockPending else { return }
        link.clockPending = false
        if pairingWouldHelp(failure) || (state == .pairing && BlueZErrorClassifier.needsEncryption(failure)) {
            link.clockAfterPairing = true
            if state != .pairing { beginPairing(now: now, &effects) }
            return
        }
        // The device keeps its own time: its time stamps say so, the link stays usable.
        effects.append(.emit(.setupProblem(characteristic: DeviceStateMachine.currentTimeCharacteristic, error: failure, session: session)))
        advance(now: now, &effects)
    }

    mutating func notificationsEnabled(_ characteristic: String, now: MonotonicInstant, _ effects: inout [DeviceEffect]) {
        guard state.isLinked else { return }
        link.pendingSubscriptions.remove(characteristic)
        link.failedSubscriptions.remove(characteristic)
        advance(now: now, &effects)
    }

    mutating func subscribeFailed(
        _ characteristic: String,
        _ failure: DeviceEvent.Failure,
        now: MonotonicInstant,
        _ effects: inout [DeviceEffect]
    ) {
        guard state.isLinked else { return }
        if isSettingUp, link.pendingSubscriptions.contains(characteristic), pairingWouldHelp(failure) {
            link.pendingSubscriptions.remove(characteristic)
            link.subscriptionsAfterPairing.insert(characteristic)
            if state != .pairing { beginPairing(now: now, &effects) }
            return
        }
        if state == .pairing, link.pendingSubscriptions.contains(characteristic), BlueZErrorClassifier.needsEncryption(failure) {
            // It failed for want of the bond being made now: it is tried again after it.
            link.pendingSubscriptions.remove(characteristic)
            link.subscriptionsAfterPairing.insert(characteristic)
            return
        }
        effects.append(.emit(.setupProblem(characteristic: characteristic, error: failure, session: session)))
        // A subscription the configuration asks for and that is not (or no longer) pending, such
        // as one added on a set-up link, counts as missing too: the recovery timer retries it.
        if link.pendingSubscriptions.remove(characteristic) != nil || configuration.subscriptions.contains(characteristic) {
            link.failedSubscriptions.insert(characteristic)
        }
        advance(now: now, &effects)
    }

    mutating func valueReceived(_ characteristic: String, now: MonotonicInstant, _ effects: inout [DeviceEffect]) {
        guard isSettingUp, link.pendingReads.remove(characteristic) != nil else { return }
        advance(now: now, &effects)
    }

    mutating func readFailed(
        _ characteristic: String,
        _ failure: DeviceEvent.Failure,
        now: MonotonicInstant,
        _ effects: inout [DeviceEffect]
    ) {
        guard isSettingUp, link.pendingReads.contains(characteristic) else { return }
        if pairingWouldHelp(failure) || (state == .pairing && BlueZErrorClassifier.needsEncryption(failure)) {
            link.pendingReads.remove(characteristic)
            link.readsAfterPairing.insert(characteristic)
            if state != .pairing { beginPairing(now: now, &effects) }
            return
        }
        link.pendingReads.remove(characteristic)
        effects.append(.emit(.setupProblem(characteristic: characteristic, error: failure, session: session)))
        advance(now: now, &effects)
    }

    // MARK: - Steps

    /// Between the link and the end of its setup (reads and subscriptions, bonding).
    var isSettingUp: Bool { state == .discovering || state == .pairing }

    mutating func beginLink(now: MonotonicInstant, _ effects: inout [DeviceEffect]) {
        link = LinkProgress()
        state = .discovering
        effects.append(.awaitServices)
        arm(.discovery, at: now + configuration.timeouts.discovery, &effects)
    }

    /// After a setup step: finish setup when nothing is pending, or settle a linked device.
    mutating func advance(now: MonotonicInstant, _ effects: inout [DeviceEffect]) {
        // Bonding holds the setup: it finishes once what waited for the bond is done.
        guard state != .pairing else { return }
        if link.setupFinished {
            settle(now: now, &effects)
        } else if link.servicesKnown, link.pendingReads.isEmpty, link.pendingSubscriptions.isEmpty, !link.clockPending {
            disarm(.subscribe, &effects)
            finishSetup(now: now, &effects)
        }
    }

    /// The setup phase is over (done or timed out). A connection whose services are right counts
    /// as a success for the reconnect controller even if some subscriptions are missing.
    mutating func finishSetup(now: MonotonicInstant, _ effects: inout [DeviceEffect]) {
        link.setupFinished = true
        link.failedSubscriptions.formUnion(link.pendingSubscriptions)
        link.pendingSubscriptions = []
        link.pendingReads = []
        link.clockPending = false
        // The subscriptions made on this link stay with bluetoothd across links.
        if !link.failedSubscriptions.isEmpty { sessionsHeld = false } else if configuration.intermittent { sessionsHeld = true }
        reconnect.recordReady(now: now)
        hasBeenReady = true
        effects.append(.persist(storeUpdate(connectedNow: true)))
        settle(now: now, &effects)
    }

    /// Picks `ready` or `degraded` for a set-up link from what is still wrong, and keeps the
    /// recovery timer armed exactly while degraded, so that no degraded link waits on an event
    /// that may never come.
    mutating func settle(now: MonotonicInstant, _ effects: inout [DeviceEffect]) {
        let missing = configuration.subscriptions.filter { link.failedSubscriptions.contains($0) }
        if !missing.isEmpty {
            state = .degraded(.subscriptionsIncomplete(missing: missing))
        } else if link.consecutiveWriteFailures >= configuration.writeFailureThreshold {
            state = .degraded(.writesFailing)
        } else {
            state = .ready
        }
        if state == .ready {
            disarm(.recovery, &effects)
        } else if !isArmed(.recovery) {
            arm(.recovery, at: now + configuration.timeouts.recoveryInterval, &effects)
        }
    }

    func storeUpdate(connectedNow: Bool) -> DeviceEffect.StoreUpdate {
        DeviceEffect.StoreUpdate(servicesSeen: servicesSeen.sorted(), hasBeenReady: hasBeenReady, connectedNow: connectedNow)
    }
}

extension DeviceStateMachine {
    /// The failure a link gets when the device lacks what its class requires: it names what was
    /// missing, so the journal says whether the device is the wrong one or its GATT came late.
    static func missingGATT(services: Set<String>, characteristics: Set<String>) -> DeviceEvent.Failure {
        var parts: [String] = []
        if !services.isEmpty { parts.append("services \(services.sorted().joined(separator: " "))") }
        if !characteristics.isEmpty { parts.append("characteristics \(characteristics.sorted().joined(separator: " "))") }
        // `notSupported`: the classifier's `protocol`, as the failure is counted (`doesNotExist`
        // would read as an object bluetoothd forgot).
        return DeviceEvent.Failure(kind: .notSupported, name: missingGATTName, message: "required " + parts.joined(separator: ", ") + " not found")
    }

    /// Not a BlueZ error name: the machine's own finding, after `ServicesResolved`.
    public static let missingGATTName = "wearfleet.RequiredGATTMissing"
}
