// Devices that wake only to measure (a cuff, a scale, a spot-check oximeter) spend most of their
// life unreachable. For them absence is no failure: the machine waits in `asleep` with a
// `Device1.Connect` left pending, which Linux turns into a passive scan for the device and a
// connection the moment it advertises (measured on the real stack: 0.2–0.4 s after its
// advertising starts; the pending call ends with `le-connection-abort-by-local` after ~40 s if it
// does not come, and is sent again). Its adapter comes from the fleet gate like any attempt's
// (placed where a slot is free), and the grant is handed back at once as `standing`: the slot
// stays held for the link to come — also between two pending Connects, which go to the same
// adapter without asking again — but the adapter is free for other attempts, since a pending
// passive-scan connect holds no LE Create Connection (the gate does not make it wait for one).

extension DeviceStateMachine {
    /// What an `asleep` device is waiting with.
    public enum Standby: Hashable, Sendable {
        case none
        /// bluetoothd has no object for it: the fleet's discovery looks for it (unbounded).
        case searching
        /// Waiting for the fleet gate to place the pending Connect on an adapter with a free slot.
        case awaitingGrant
        /// A `Device1.Connect` through this adapter waits for the device to advertise.
        case connecting(AdapterID)
        /// Between two pending Connects on this adapter (its slot still held): the last one ended
        /// without the device.
        case pausing(AdapterID)
    }

    /// The least time between two pending Connects of a sleeping device, so that a bluetoothd
    /// that answers at once (an adapter going, a controller refusing) is not asked in a loop.
    public static let standbyPause: Duration = .seconds(1)

    /// Waits for an intermittent device to wake: a pending Connect where bluetoothd knows it,
    /// else a search. Called by `pursue`, once bluetoothd and a powered adapter are there.
    mutating func waitForWake(now: MonotonicInstant, _ effects: inout [DeviceEffect]) {
        state = .asleep
        // Only an adapter that is powered: a pending Connect on one that went would be refused
        // at once, again and again.
        if let adapter = knownAdapter, poweredAdapters.contains(adapter), !needsRediscovery {
            standby = .awaitingGrant
            effects.append(.requestAttempt)
        } else {
            standby = .searching
            effects.append(.startResolve)
        }
    }

    /// A bonded device may indicate its records the moment its link is encrypted, and bluetoothd
    /// passes on only what a client subscribed to. A link this daemon set up left its sessions
    /// with bluetoothd (5.66 keeps them across links and enables them again); a daemon (or a
    /// bluetoothd) that started since has none: subscribe on the cached attributes now —
    /// bluetoothd 5.66 registers a StartNotify while disconnected and enables it on the next
    /// link. Once per bluetoothd and object; a refusal changes nothing (the setup subscribes
    /// again). Not on the fd path: an `AcquireNotify` needs the link (and the configuration
    /// refuses `fd_path` for intermittent classes).
    mutating func subscribeWhileAsleep(_ effects: inout [DeviceEffect]) {
        // Only once the pending Connect's adapter is chosen: the subscription must go to the
        // object the link will come up on (`linkAdapter`), not to any object of the device.
        guard isPaired, !sessionsHeld, !configuration.useFileDescriptorPath, case .connecting = standby else { return }
        sessionsHeld = true
        for characteristic in configuration.subscriptions {
            effects.append(.subscribe(characteristic: characteristic, via: .startNotify))
        }
    }

    /// The gate placed the pending Connect: hand the grant back as `standing` (the slot stays
    /// held, the adapter is free) and send it.
    mutating func standbyGranted(_ adapter: AdapterID, now: MonotonicInstant, _ effects: inout [DeviceEffect]) {
        effects.append(.attemptFinished(adapter: adapter, outcome: .standing))
        sendStandingConnect(on: adapter, now: now, &effects)
    }

    /// Sends the pending Connect on the adapter whose slot the device holds.
    private mutating func sendStandingConnect(on adapter: AdapterID, now: MonotonicInstant, _ effects: inout [DeviceEffect]) {
        session += 1
        linkAdapter = adapter
        standby = .connecting(adapter)
        subscribeWhileAsleep(&effects)
        effects.append(.connect(adapter: adapter))
        arm(.connect, at: now + configuration.timeouts.connect, &effects)
    }

    /// The pause between two pending Connects is over (or an operator asked for a reconnect):
    /// the next one goes to the same adapter, whose slot the device still holds, unless that
    /// adapter went or the device must be found again; then the slot goes back and the device
    /// is placed (or looked for) anew. (An object bluetoothd forgot there answers the Connect
    /// with `UnknownObject`, which does the same.)
    mutating func resumeStanding(now: MonotonicInstant, _ effects: inout [DeviceEffect]) {
        guard state == .asleep, case .pausing(let adapter) = standby else { return }
        disarm(.standby, &effects)
        if poweredAdapters.contains(adapter), !needsRediscovery {
            sendStandingConnect(on: adapter, now: now, &effects)
        } else {
            endStanding(&effects)
            waitForWake(now: now, &effects)
        }
    }

    /// The device gives up the slot its pending Connects hold (it woke elsewhere, the adapter
    /// went, bluetoothd forgot it).
    mutating func endStanding(_ effects: inout [DeviceEffect]) {
        disarm(.connect, &effects)
        disarm(.standby, &effects)
        switch standby {
        case .connecting(let adapter), .pausing(let adapter): effects.append(.standingEnded(adapter: adapter))
        case .none, .searching, .awaitingGrant: break
        }
        linkAdapter = nil
        standby = .none
    }

    /// The pending Connect ended without a link (the device slept through it, or bluetoothd
    /// gave up on it): pause, then send the next on the same adapter. Nothing is counted, and
    /// the slot stays the device's: given back, another device could take it in the pause and
    /// the next wake would find no room.
    mutating func pauseStandby(cancelling: Bool, now: MonotonicInstant, _ effects: inout [DeviceEffect]) {
        guard case .connecting(let adapter) = standby else { return }
        if cancelling { effects.append(.cancelConnect) }
        disarm(.connect, &effects)
        linkAdapter = nil
        standby = .pausing(adapter)
        arm(.standby, at: now + Self.standbyPause, &effects)
    }

    /// A failed pending Connect. Failures that say the device is not there (yet), or that the
    /// gateway could not take it now, are its sleep; any other is a failure like an attempt's.
    mutating func standbyConnectFailed(
        _ failure: DeviceEvent.Failure,
        now: MonotonicInstant,
        random: inout some RandomNumberGenerator,
        _ effects: inout [DeviceEffect]
    ) {
        if failure.kind == .unknownObject || failure.kind == .doesNotExist {
            // bluetoothd forgot it (its object expired or was removed): look for it.
            endStanding(&effects)
            knownAdapter = nil
            waitForWake(now: now, &effects)
            return
        }
        switch BlueZErrorClassifier.classify(failure) {
        case .notReady, .bluetoothOff:
            // The adapter is going: look for the device where it is (another adapter, later).
            endStanding(&effects)
            knownAdapter = nil
            waitForWake(now: now, &effects)
        case .transient, .outOfSlots, .busy:
            pauseStandby(cancelling: false, now: now, &effects)
        case let failureClass:
            teardown(.alreadyGone, attemptOutcome: .cancelled, &effects)
            fail(failureClass, error: failure, now: now, random: &random, &effects)
        }
    }

    /// An intermittent device's link ended. Once its services were known it is the end of a
    /// session (it disconnects once it has sent what it had, and sleeps; bluetoothd delivered
    /// its records to the sessions it holds): no failure, it waits for the next wake. A link that
    /// ended before (encryption with a key the device no longer has ends it there) or during a
    /// bonding is a failure like any other, so such a device backs off and spends its budget
    /// instead of being connected again at once at every advertisement.
    mutating func intermittentLinkEnded(
        _ reason: DeviceEvent.Failure?,
        now: MonotonicInstant,
        random: inout some RandomNumberGenerator,
        _ effects: inout [DeviceEffect]
    ) {
        let duringPairing = state == .pairing
        let servicesKnown = link.servicesKnown
        teardown(.alreadyGone, attemptOutcome: .cancelled, &effects)
        if duringPairing {
            let cancelled = DeviceEvent.Failure(.authenticationCanceled, message: "the link ended during the bonding")
            fail(.pairing, error: reason ?? cancelled, now: now, random: &random, &effects)
        } else if !servicesKnown {
            fail(BlueZErrorClassifier.classifyDisconnect(reason), error: reason, now: now, random: &random, &effects)
        } else {
            pursue(now: now, &effects)
        }
    }
}
