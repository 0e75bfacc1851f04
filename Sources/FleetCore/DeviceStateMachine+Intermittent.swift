// Devices that wake only to measure (a cuff, a scale, a spot-check oximeter) spend most of their
// life unreachable. For them absence is no failure: the machine waits in `asleep` with a
// `Device1.Connect` left pending, which Linux turns into a passive scan for the device and a
// connection the moment it advertises (measured on the real stack: 0.2–0.4 s after its
// advertising starts; the pending call ends with `le-connection-abort-by-local` after ~40 s if it
// does not come, and is sent again). Such a Connect holds no controller time, so it goes around
// the fleet gate, whose one-attempt-per-adapter rule is about LE Create Connection.

extension DeviceStateMachine {
    /// What an `asleep` device is waiting with.
    public enum Standby: Hashable, Sendable {
        case none
        /// bluetoothd has no object for it: the fleet's discovery looks for it (unbounded).
        case searching
        /// A `Device1.Connect` through this adapter waits for the device to advertise.
        case connecting(AdapterID)
        /// Between two pending Connects: the last one ended without the device.
        case pausing
    }

    /// The least time between two pending Connects of a sleeping device, so that a bluetoothd
    /// that answers at once (an adapter going, a controller refusing) is not asked in a loop.
    public static let standbyPause: Duration = .seconds(1)

    /// Waits for an intermittent device to wake: a pending Connect where bluetoothd knows it,
    /// else a search. Called by `pursue`, once bluetoothd and a powered adapter are there.
    mutating func waitForWake(now: MonotonicInstant, _ effects: inout [DeviceEffect]) {
        let fallingAsleep = state != .asleep
        state = .asleep
        if let adapter = knownAdapter, !needsRediscovery {
            standby = .connecting(adapter)
            session += 1
            linkAdapter = adapter
            if fallingAsleep, isPaired {
                // A bonded device may indicate its records the moment its link is encrypted, and
                // bluetoothd passes on only what a client subscribed to: subscribe now, on the
                // cached attributes (bluetoothd 5.66 registers a StartNotify while disconnected
                // and enables it on the next link). A session this connection holds already is
                // answered at once; a refusal changes nothing here (the setup subscribes again).
                for characteristic in configuration.subscriptions {
                    effects.append(.subscribe(characteristic: characteristic, via: .startNotify))
                }
            }
            effects.append(.connect(adapter: adapter))
            arm(.connect, at: now + configuration.timeouts.connect, &effects)
        } else {
            standby = .searching
            effects.append(.startResolve)
        }
    }

    /// The pending Connect ended without a link (the device slept through it, or bluetoothd
    /// gave up on it): pause, then send the next. Nothing is counted.
    mutating func pauseStandby(cancelling: Bool, now: MonotonicInstant, _ effects: inout [DeviceEffect]) {
        disarm(.connect, &effects)
        if cancelling { effects.append(.cancelConnect) }
        linkAdapter = nil
        standby = .pausing
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
            disarm(.connect, &effects)
            linkAdapter = nil
            knownAdapter = nil
            waitForWake(now: now, &effects)
            return
        }
        switch BlueZErrorClassifier.classify(failure) {
        case .transient, .outOfSlots, .busy, .notReady, .bluetoothOff:
            pauseStandby(cancelling: false, now: now, &effects)
        case let failureClass:
            teardown(.alreadyGone, attemptOutcome: .cancelled, &effects)
            fail(failureClass, error: failure, now: now, random: &random, &effects)
        }
    }

    /// An intermittent device's link ended: the session is over (it disconnects once it has
    /// sent what it had, and sleeps), so it waits for the next wake. No failure is counted.
    mutating func sessionEnded(now: MonotonicInstant, _ effects: inout [DeviceEffect]) {
        teardown(.alreadyGone, attemptOutcome: .cancelled, &effects)
        pursue(now: now, &effects)
    }
}
