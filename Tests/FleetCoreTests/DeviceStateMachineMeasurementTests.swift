import Testing
@testable import FleetCore

/// Bonding (a class that must bond, and a characteristic that needs encryption) and devices that
/// sleep between their measurements.
@Suite struct DeviceStateMachineMeasurementTests {
    static let bonding: DeviceStateMachine.Configuration = {
        var configuration = DeviceHarness.strap
        configuration.bond = true
        return configuration
    }()

    static let intermittent: DeviceStateMachine.Configuration = {
        var configuration = DeviceHarness.strap
        configuration.intermittent = true
        return configuration
    }()

    // MARK: - Bonding

    @Test func aClassThatBondsPairsBeforeReadingOrSubscribing() throws {
        var h = try DeviceHarness.discovering(configuration: Self.bonding)
        let resolved = h.feed(.servicesResolved(services: DeviceHarness.strapServices, characteristics: DeviceHarness.strapCharacteristics))
        #expect(resolved.contains(.pair))
        #expect(!resolved.contains { if case .read = $0 { true } else if case .subscribe = $0 { true } else { false } })
        #expect(h.state == .pairing)
        #expect(h.machine.isArmed(.pairing))
        let bonded = h.feed(.pairingSucceeded)
        #expect(bonded.contains(.read(characteristic: UUIDs.batteryLevel)))
        #expect(bonded.contains(.subscribe(characteristic: UUIDs.heartRateMeasurement, via: .startNotify)))
        #expect(h.state == .discovering && !h.machine.isArmed(.pairing) && h.machine.isPaired)
        _ = h.feed(.valueReceived(characteristic: UUIDs.batteryLevel))
        _ = h.feed(.notificationsEnabled(characteristic: UUIDs.heartRateMeasurement))
        #expect(h.state == .ready)
    }

    @Test func aDeviceBluetoothdSaysIsPairedIsNotPairedAgain() throws {
        var h = try DeviceHarness.discovering(configuration: Self.bonding)
        _ = h.feed(.pairedChanged(true))
        let resolved = h.feed(.servicesResolved(services: DeviceHarness.strapServices, characteristics: DeviceHarness.strapCharacteristics))
        #expect(!resolved.contains(.pair))
        #expect(h.state == .discovering)
    }

    @Test func aSubscriptionThatNeedsEncryptionBondsOnceAndIsTriedAgain() throws {
        var h = try DeviceHarness.settingUp()
        let refused = h.feed(.subscribeFailed(characteristic: UUIDs.heartRateMeasurement, Failures.notPaired))
        #expect(refused.contains(.pair))
        #expect(!refused.contains { if case .emit(.setupProblem) = $0 { true } else { false } })
        #expect(h.state == .pairing)
        // The read still in flight lands during the bonding; setup waits for the bond.
        _ = h.feed(.valueReceived(characteristic: UUIDs.batteryLevel))
        #expect(h.state == .pairing)
        let bonded = h.feed(.pairingSucceeded)
        #expect(bonded.contains(.subscribe(characteristic: UUIDs.heartRateMeasurement, via: .startNotify)))
        // Still refused after bonding: no second bonding on this link, the device is degraded.
        let again = h.feed(.subscribeFailed(characteristic: UUIDs.heartRateMeasurement, Failures.notPaired))
        #expect(!again.contains(.pair))
        #expect(h.state == .degraded(.subscriptionsIncomplete(missing: [UUIDs.heartRateMeasurement])))
    }

    @Test func aWrongPasskeyIsNotRetriedUntilSomeoneAsks() throws {
        var h = try DeviceHarness.discovering(configuration: Self.bonding)
        _ = h.feed(.servicesResolved(services: DeviceHarness.strapServices, characteristics: DeviceHarness.strapCharacteristics))
        let failed = h.feed(.pairingFailed(Failures.wrongKey))
        #expect(failed.contains(.disconnect))
        #expect(failed.contains(h.failed(.pairing, Failures.wrongKey)))
        #expect(h.state == .suspended(.gaveUp(.pairing)))
        #expect(DeviceStateMachine.TimerKind.allCases.allSatisfy { !h.machine.isArmed($0) }, "nothing would retry it")
        #expect(BlueZErrorClassifier.classifyPairing(Failures.wrongKey) == .wrongKey)
        let asked = h.feed(.reconnectRequested)
        #expect(asked.contains(.requestAttempt))
    }

    @Test func aPairingThatTimesOutIsRetriedWithinItsBudgetThenWaits() throws {
        var h = try DeviceHarness.discovering(configuration: Self.bonding)
        var outcomes: [DeviceState] = []
        for _ in 0..<3 {
            _ = h.feed(.servicesResolved(services: DeviceHarness.strapServices, characteristics: DeviceHarness.strapCharacteristics))
            #expect(h.state == .pairing)
            _ = try h.fire(.pairing)
            outcomes.append(h.state)
            if case .backingOff = h.state {
                _ = try h.fire(.backoff)
                _ = h.feed(.attemptGranted(adapter: DeviceHarness.hci0))
                _ = h.feed(.connected)
            }
        }
        #expect(outcomes.count == 3)
        #expect(outcomes.prefix(2).allSatisfy { if case .backingOff = $0 { true } else { false } })
        #expect(outcomes.last == .suspended(.gaveUp(.pairing)))
    }

    // MARK: - The device's clock

    @Test func theClockIsSetAfterTheBondAndSetupWaitsForIt() throws {
        var configuration = Self.bonding
        configuration.setTime = true
        var h = try DeviceHarness.discovering(configuration: configuration)
        let resolved = h.feed(.servicesResolved(services: DeviceHarness.strapServices, characteristics: DeviceHarness.strapCharacteristics))
        #expect(!resolved.contains(.writeCurrentTime), "not before the bond: the device refuses it unencrypted")
        let bonded = h.feed(.pairingSucceeded)
        #expect(bonded.contains(.writeCurrentTime))
        _ = h.feed(.valueReceived(characteristic: UUIDs.batteryLevel))
        _ = h.feed(.notificationsEnabled(characteristic: UUIDs.heartRateMeasurement))
        #expect(h.state == .discovering, "the clock write is part of the setup")
        _ = h.feed(.clockWritten)
        #expect(h.state == .ready)
    }

    @Test func aClockTheDeviceRefusesIsASetupProblemNotAFailure() throws {
        var configuration = DeviceHarness.strap
        configuration.setTime = true
        var h = try DeviceHarness.discovering(configuration: configuration)
        let resolved = h.feed(.servicesResolved(services: DeviceHarness.strapServices, characteristics: DeviceHarness.strapCharacteristics))
        #expect(resolved.contains(.writeCurrentTime))
        _ = h.feed(.valueReceived(characteristic: UUIDs.batteryLevel))
        _ = h.feed(.notificationsEnabled(characteristic: UUIDs.heartRateMeasurement))
        let refused = h.feed(.clockWriteFailed(Failures.writeFailed))
        #expect(refused.contains(.emit(.setupProblem(
            characteristic: DeviceStateMachine.currentTimeCharacteristic, error: Failures.writeFailed, session: 1))))
        #expect(h.state == .ready)
    }

    @Test func aClockWriteThatNeedsEncryptionBonds() throws {
        var configuration = DeviceHarness.strap
        configuration.setTime = true
        var h = try DeviceHarness.discovering(configuration: configuration)
        _ = h.feed(.servicesResolved(services: DeviceHarness.strapServices, characteristics: DeviceHarness.strapCharacteristics))
        let refused = h.feed(.clockWriteFailed(Failures.notPaired))
        #expect(refused.contains(.pair))
        let bonded = h.feed(.pairingSucceeded)
        #expect(bonded.contains(.writeCurrentTime))
    }

    /// An intermittent class that bonds, its pending Connect placed and the device just linked.
    static func bondingSleeperJustLinked() throws -> DeviceHarness {
        var configuration = intermittent
        configuration.bond = true
        var h = try DeviceHarness.idle(configuration: configuration)
        _ = h.feed(.policyUpdated(wanted: true))
        _ = h.feed(.attemptGranted(adapter: DeviceHarness.hci0))
        _ = h.feed(.connected)
        return h
    }

    @Test func aBondingBluetoothdStartedThatEndsTheLinkIsAFailedBondingNotARadioLoss() throws {
        // The cuff asks for security as it connects; bluetoothd pairs on its own, the agent
        // gives the (wrong) passkey, SMP fails and the host ends the link before any service.
        var h = try Self.bondingSleeperJustLinked()
        #expect(h.feed(.pairingKeyGiven).isEmpty)
        let ended = h.feed(.disconnected(nil))
        #expect(ended.contains { if case .emit(.failed(.pairing, let error?, _)) = $0 { error.kind == .authenticationFailed } else { false } })
        #expect(h.state == .suspended(.gaveUp(.pairing)), "the same key would fail the same way at every wake")
    }

    @Test func aBondingBluetoothdStartedThatSucceededIsNoFailureWhenTheLinkEnds() throws {
        var h = try Self.bondingSleeperJustLinked()
        _ = h.feed(.pairingKeyGiven)
        _ = h.feed(.pairedChanged(true))
        let ended = h.feed(.disconnected(nil))
        #expect(!ended.contains { if case .emit(.failed(.pairing, _, _)) = $0 { true } else { false } })
        #expect(h.state != .suspended(.gaveUp(.pairing)))
    }

    // MARK: - Intermittent devices

    @Test func aSleepingDeviceWaitsWithAPendingConnectPlacedByTheGateHoldingOnlyASlot() throws {
        var h = try DeviceHarness.idle(configuration: Self.intermittent)
        _ = h.feed(.adapterPowered(DeviceHarness.hci1))
        let wanted = h.feed(.policyUpdated(wanted: true))
        #expect(h.state == .asleep)
        #expect(wanted.contains(.requestAttempt), "the gate places it where a slot is free")
        // Placed on hci1 (not where bluetoothd reported it first): the grant is handed back at
        // once as standing — the slot stays held, the adapter is free for other attempts.
        let granted = h.feed(.attemptGranted(adapter: DeviceHarness.hci1))
        #expect(granted.prefix(2) == [.attemptFinished(adapter: DeviceHarness.hci1, outcome: .standing), .connect(adapter: DeviceHarness.hci1)])
        // Nobody woke it: bluetoothd gives up on the pending connect. Nothing is counted, the
        // slot stays the device's (given back, another device could take it in the pause), and
        // the next one goes to the same adapter after a pause, without asking the gate again.
        let slept = h.feed(.connectFailed(Failures.abortByLocal))
        #expect(!slept.contains { if case .emit(.failed) = $0 { true } else { false } })
        #expect(!slept.contains { if case .standingEnded = $0 { true } else { false } })
        #expect(h.state == .asleep && h.machine.reconnect.consecutiveFailures == 0)
        #expect(h.machine.standby == .pausing(DeviceHarness.hci1))
        let next = try h.fire(.standby)
        #expect(next.contains(.connect(adapter: DeviceHarness.hci1)))
        #expect(!next.contains(.requestAttempt))
        // It wakes: the pending Connect completes.
        _ = h.feed(.connected)
        #expect(h.state == .discovering)
    }

    @Test func theEndOfASessionIsNoFailure() throws {
        var h = try DeviceHarness.idle(configuration: Self.intermittent)
        _ = h.feed(.policyUpdated(wanted: true))
        _ = h.feed(.attemptGranted(adapter: DeviceHarness.hci0))
        _ = h.feed(.connected)
        _ = h.feed(.servicesResolved(services: DeviceHarness.strapServices, characteristics: DeviceHarness.strapCharacteristics))
        _ = h.feed(.valueReceived(characteristic: UUIDs.batteryLevel))
        _ = h.feed(.notificationsEnabled(characteristic: UUIDs.heartRateMeasurement))
        #expect(h.state == .ready)
        let ended = h.feed(.disconnected(Failures.remoteReason))
        #expect(!ended.contains { if case .emit(.failed) = $0 { true } else { false } })
        #expect(ended.contains(.requestAttempt))
        #expect(h.state == .asleep)
        #expect(h.machine.reconnect.consecutiveFailures == 0)
        #expect(ended.contains(h.changed(from: .ready, to: .asleep)))
    }

    @Test func aBondedSleepingDeviceIsSubscribedBeforeItWakesOnceNotAtEveryPendingConnect() throws {
        // As the daemon starts: wanted before bluetoothd's objects are reported, then told the
        // device is paired and found (the translator's order).
        var h = try DeviceHarness.idle(configuration: Self.intermittent, deviceKnown: false)
        _ = h.feed(.policyUpdated(wanted: true))
        _ = h.feed(.pairedChanged(true))
        let found = h.feed(.deviceFound(adapter: DeviceHarness.hci0))
        #expect(found.contains(.requestAttempt))
        // Subscribed once placed: on the object of the adapter its link will come up on.
        let granted = h.feed(.attemptGranted(adapter: DeviceHarness.hci0))
        #expect(granted.contains(.subscribe(characteristic: UUIDs.heartRateMeasurement, via: .startNotify)))
        #expect(h.machine.linkAdapter == DeviceHarness.hci0)
        // Its answer while asleep changes nothing.
        #expect(h.feed(.subscribeFailed(characteristic: UUIDs.heartRateMeasurement, Failures.notSupported)).isEmpty)
        _ = h.feed(.connectFailed(Failures.abortByLocal))
        let again = try h.fire(.standby)
        #expect(!again.contains { if case .subscribe = $0 { true } else { false } })
        #expect(again.contains(.connect(adapter: DeviceHarness.hci0)))
        // bluetoothd restarted: its sessions are gone, so the device is subscribed again.
        _ = h.feed(.bluetoothdVanished)
        _ = h.feed(.bluetoothdAppeared)
        _ = h.feed(.adapterPowered(DeviceHarness.hci0))
        _ = h.feed(.pairedChanged(true))
        _ = h.feed(.deviceFound(adapter: DeviceHarness.hci0))
        let back = h.feed(.attemptGranted(adapter: DeviceHarness.hci0))
        #expect(back.contains(.subscribe(characteristic: UUIDs.heartRateMeasurement, via: .startNotify)))
    }

    @Test func aPairingLearnedWhileAsleepSubscribesThen() throws {
        var h = try DeviceHarness.idle(configuration: Self.intermittent)
        let asleep = h.feed(.policyUpdated(wanted: true))
        #expect(!asleep.contains { if case .subscribe = $0 { true } else { false } })
        // Placed, waiting with a pending Connect: subscribed the moment the bond is learned.
        _ = h.feed(.attemptGranted(adapter: DeviceHarness.hci0))
        let paired = h.feed(.pairedChanged(true))
        #expect(paired == [.subscribe(characteristic: UUIDs.heartRateMeasurement, via: .startNotify)])
    }

    @Test func aPairingLearnedBeforeThePendingConnectIsPlacedSubscribesOncePlaced() throws {
        var h = try DeviceHarness.idle(configuration: Self.intermittent)
        _ = h.feed(.policyUpdated(wanted: true))
        // No object chosen yet: the subscription would go to whichever object comes first.
        #expect(h.feed(.pairedChanged(true)).isEmpty)
        let granted = h.feed(.attemptGranted(adapter: DeviceHarness.hci1))
        #expect(granted.contains(.subscribe(characteristic: UUIDs.heartRateMeasurement, via: .startNotify)))
        #expect(h.machine.linkAdapter == DeviceHarness.hci1)
    }

    @Test func aLinkThatEndsBeforeItsServicesIsAFailureNotTheEndOfASession() throws {
        var h = try DeviceHarness.idle(configuration: Self.intermittent)
        _ = h.feed(.policyUpdated(wanted: true))
        _ = h.feed(.attemptGranted(adapter: DeviceHarness.hci0))
        _ = h.feed(.connected)
        // Encryption with a key the device no longer has ends the link before GATT.
        let ended = h.feed(.disconnected(nil))
        #expect(ended.contains(h.failed(.transient)))
        if case .backingOff = h.state {} else { Issue.record("expected a backoff, got \(h.state)") }
    }

    @Test func aLinkThatEndsDuringTheBondingIsAPairingFailure() throws {
        var h = try Self.bondingSleeperJustLinked()
        _ = h.feed(.servicesResolved(services: DeviceHarness.strapServices, characteristics: DeviceHarness.strapCharacteristics))
        #expect(h.state == .pairing)
        let ended = h.feed(.disconnected(nil))
        #expect(ended.contains { if case .emit(.failed(.pairing, _, _)) = $0 { true } else { false } })
        #expect(!ended.contains(.disconnect), "the link is gone already")
        // The Pair reply that follows changes nothing.
        #expect(h.feed(.pairingFailed(Failures.pairingTimeout)).isEmpty)
    }

    @Test func aPendingConnectMovesOffAnAdapterThatWent() throws {
        var h = try DeviceHarness.idle(configuration: Self.intermittent)
        _ = h.feed(.policyUpdated(wanted: true))
        let gone = h.feed(.adapterUnpowered(DeviceHarness.hci0))
        #expect(!gone.contains(.connect(adapter: DeviceHarness.hci0)), "no Connect on an adapter that is off")
        let refused = h.feed(.connectFailed(DeviceEvent.Failure(name: "org.bluez.Error.NotReady", message: "Resource Not Ready")))
        #expect(!refused.contains { if case .scheduleTimer(.standby, _, _) = $0 { true } else { false } })
    }

    @Test func aDeviceBluetoothdDoesNotKnowIsLookedForWithoutATimeLimit() throws {
        var h = try DeviceHarness.idle(configuration: Self.intermittent, deviceKnown: false)
        let wanted = h.feed(.policyUpdated(wanted: true))
        #expect(wanted.contains(.startResolve))
        #expect(h.state == .asleep && !h.machine.isArmed(.resolve))
        let found = h.feed(.deviceFound(adapter: DeviceHarness.hci0))
        #expect(found.contains(.stopResolve))
        #expect(found.contains(.requestAttempt))
        _ = h.feed(.attemptGranted(adapter: DeviceHarness.hci0))
        // Its object goes (the bond was removed): it is looked for again, still asleep.
        let lost = h.feed(.deviceLost)
        #expect(lost.contains(.startResolve))
        #expect(lost.contains(.standingEnded(adapter: DeviceHarness.hci0)), "its slot goes back")
        #expect(h.state == .asleep)
    }

    @Test func aPendingConnectBluetoothdHoldsTooLongIsCancelledAndSentAgain() throws {
        var h = try DeviceHarness.idle(configuration: Self.intermittent)
        _ = h.feed(.policyUpdated(wanted: true))
        _ = h.feed(.attemptGranted(adapter: DeviceHarness.hci0))
        let expired = try h.fire(.connect)
        #expect(expired.contains(.cancelConnect))
        #expect(h.state == .asleep && h.machine.isArmed(.standby))
        #expect(!expired.contains { if case .emit(.failed) = $0 { true } else { false } })
        #expect(!expired.contains { if case .standingEnded = $0 { true } else { false } }, "the slot stays held")
        #expect(try h.fire(.standby).contains(.connect(adapter: DeviceHarness.hci0)))
    }

    @Test func theAdapterOfAPausedStandingGoingGivesTheSlotBackAndPlacesTheDeviceAnew() throws {
        var h = try DeviceHarness.idle(configuration: Self.intermittent)
        _ = h.feed(.adapterPowered(DeviceHarness.hci1))
        _ = h.feed(.policyUpdated(wanted: true))
        _ = h.feed(.attemptGranted(adapter: DeviceHarness.hci0))
        _ = h.feed(.connectFailed(Failures.abortByLocal))
        let gone = h.feed(.adapterUnpowered(DeviceHarness.hci0))
        #expect(gone.contains(.standingEnded(adapter: DeviceHarness.hci0)))
        #expect(h.state == .asleep && !h.machine.isArmed(.standby))
        // bluetoothd knew it on hci0 only: it is looked for.
        #expect(h.machine.standby == .searching || h.machine.standby == .awaitingGrant)
    }

    @Test func aRefusalOfThePendingConnectIsAFailure() throws {
        var h = try DeviceHarness.idle(configuration: Self.intermittent)
        _ = h.feed(.policyUpdated(wanted: true))
        _ = h.feed(.attemptGranted(adapter: DeviceHarness.hci0))
        let refused = h.feed(.connectFailed(Failures.notAuthorized))
        #expect(refused.contains(h.failed(.denied, Failures.notAuthorized)))
        #expect(refused.contains(.standingEnded(adapter: DeviceHarness.hci0)))
        if case .backingOff = h.state {} else { Issue.record("expected a backoff, got \(h.state)") }
    }

    @Test func unwantedWhileAsleepCancelsThePendingConnect() throws {
        var h = try DeviceHarness.idle(configuration: Self.intermittent)
        _ = h.feed(.policyUpdated(wanted: true))
        _ = h.feed(.attemptGranted(adapter: DeviceHarness.hci0))
        let dropped = h.feed(.policyUpdated(wanted: false))
        #expect(dropped.contains(.cancelConnect))
        #expect(dropped.contains(.standingEnded(adapter: DeviceHarness.hci0)))
        #expect(h.state == .idle)
    }
}
