import Testing
@testable import FleetCore

/// A failure the fleet afterwards puts down to the adapter powering off or bluetoothd leaving
/// (`linkLossExplained`) is taken back: budgets, backoff, breaker and the rediscovery flag are
/// as if the loss had been an environment event, and a wait it imposed ends. Only the most
/// recent failure (with the retries' failures chained to it), and only while nothing newer
/// happened.
@Suite struct DeviceStateMachineExplainedLossTests {
    let hci0 = DeviceHarness.hci0
    let hci1 = DeviceHarness.hci1

    /// Ready on hci0; with `alsoPowered`, hci1 is powered as well.
    static func ready(alsoPowered: AdapterID? = nil, policy: ReconnectPolicy = ReconnectPolicy()) throws -> DeviceHarness {
        var h = try DeviceHarness.idle(policy: policy)
        if let alsoPowered { _ = h.feed(.adapterPowered(alsoPowered)) }
        _ = h.feed(.policyUpdated(wanted: true))
        _ = h.feed(.attemptGranted(adapter: DeviceHarness.hci0))
        _ = h.feed(.connected)
        _ = h.feed(.servicesResolved(services: DeviceHarness.strapServices, characteristics: DeviceHarness.strapCharacteristics))
        _ = h.feed(.valueReceived(characteristic: UUIDs.batteryLevel))
        _ = h.feed(.notificationsEnabled(characteristic: UUIDs.heartRateMeasurement))
        #expect(h.state == .ready)
        return h
    }

    func withdrawn(_ h: DeviceHarness, _ failureClass: FailureClass = .transient, cause: FleetEvent.LinkLossCause) -> DeviceEffect {
        .emit(.failureWithdrawn(failureClass, cause: cause, session: h.machine.session))
    }

    static func withdrawals(_ effects: [DeviceEffect]) -> [DeviceEffect] {
        effects.filter { if case .emit(.failureWithdrawn) = $0 { true } else { false } }
    }

    // MARK: - Taken back

    @Test func aReasonlessLossItsAdapterExplainsIsTakenBackAndTheDeviceWaitsForTheAdapterNotABackoff() throws {
        var h = try Self.ready()
        let reconnectBefore = h.machine.reconnect
        let lost = h.feed(.disconnected(nil))
        #expect(lost.contains(h.failed(.transient)))
        let backingOff = h.state
        #expect(h.machine.reconnect.consecutiveFailures == 1)

        h.advance(by: .milliseconds(40))
        let explained = h.feed(.linkLossExplained(adapter: hci0, cause: .adapterPoweredOff))
        #expect(explained == [
            withdrawn(h, cause: .adapterPoweredOff), .cancelTimer(.backoff), .requestAttempt,
            h.changed(from: backingOff, to: .connecting(adapter: nil)),
        ])
        #expect(h.machine.reconnect == reconnectBefore, "budget, backoff step and breaker as before the loss")
        #expect(h.machine.reconnect.failuresByClass.isEmpty && h.machine.reconnect.consecutiveFailures == 0)

        // The power-off itself follows (the fleet applies it right after): the device waits for
        // the adapter, and asks again the moment it is back, with no backoff in between.
        _ = h.feed(.adapterUnpowered(hci0))
        #expect(h.state == .suspended(.noPoweredAdapter))
        h.advance(by: .seconds(30))
        let back = h.feed(.adapterPowered(hci0))
        #expect(back == [.requestAttempt, h.changed(from: .suspended(.noPoweredAdapter), to: .connecting(adapter: nil))])
        #expect(!h.machine.isArmed(.backoff))

        // The next real failure is the first of a row again.
        _ = h.feed(.attemptGranted(adapter: hci0))
        _ = h.feed(.connectFailed(Failures.abortByRemote))
        guard case .backingOff(let attempt, _) = h.state else {
            Issue.record("expected a backoff, got \(h.state)")
            return
        }
        #expect(attempt == 1)
        #expect(h.machine.reconnect.consecutiveFailures == 1)
    }

    /// The same story without the explanation: the loss stays a failure and the next one is the
    /// second of a row (what the test above must not see).
    @Test func anUnexplainedReasonlessLossStaysAFailure() throws {
        var h = try Self.ready()
        _ = h.feed(.disconnected(nil))
        _ = h.feed(.adapterUnpowered(hci0))
        _ = h.feed(.adapterPowered(hci0))
        _ = h.feed(.attemptGranted(adapter: hci0))
        _ = h.feed(.connectFailed(Failures.abortByRemote))
        guard case .backingOff(let attempt, _) = h.state else {
            Issue.record("expected a backoff, got \(h.state)")
            return
        }
        #expect(attempt == 2)
        #expect(h.machine.reconnect.consecutiveFailures == 2)
    }

    @Test func withAnotherAdapterPoweredTheDeviceAsksForAnAttemptAtOnceInsteadOfBackingOff() throws {
        var h = try Self.ready(alsoPowered: hci1)
        _ = h.feed(.disconnected(nil))
        #expect(h.machine.isArmed(.backoff))
        let explained = h.feed(.linkLossExplained(adapter: hci0, cause: .adapterPoweredOff))
        #expect(explained.contains(.requestAttempt))
        #expect(h.state == .connecting(adapter: nil))
        // hci0's power-off leaves hci1: the request stands.
        #expect(h.feed(.adapterUnpowered(hci0)).isEmpty)
        #expect(h.state == .connecting(adapter: nil))
    }

    @Test func bluetoothdLeavingAfterTheLossTakesItBackAndTheDeviceWaitsForBluetoothd() throws {
        var h = try Self.ready()
        let reconnectBefore = h.machine.reconnect
        _ = h.feed(.disconnected(nil))
        // The fleet tells the devices bluetoothd left first, then explains the losses.
        _ = h.feed(.bluetoothdVanished)
        #expect(h.state == .suspended(.bluetoothdUnavailable))
        let explained = h.feed(.linkLossExplained(adapter: hci0, cause: .bluetoothdGone))
        #expect(explained == [withdrawn(h, cause: .bluetoothdGone)], "the bookkeeping only: it already waits for bluetoothd")
        #expect(h.machine.reconnect == reconnectBefore)
    }

    @Test func aConnectItsAdapterPowerOffFailedIsTakenBack() throws {
        var h = try DeviceHarness.connecting()
        let reconnectBefore = h.machine.reconnect
        _ = h.feed(.connectFailed(DeviceEvent.Failure(name: "org.bluez.Error.Failed", message: "le-connection-abort-by-local")))
        #expect(h.machine.reconnect.consecutiveFailures == 1)
        let explained = h.feed(.linkLossExplained(adapter: hci0, cause: .adapterPoweredOff))
        #expect(Self.withdrawals(explained) == [withdrawn(h, cause: .adapterPoweredOff)])
        #expect(h.machine.reconnect == reconnectBefore)
        #expect(h.state == .connecting(adapter: nil))
    }

    @Test func aGiveUpTheLossCausedIsLiftedWithIt() throws {
        // A budget of zero transient failures that gives up: the loss alone stops the device.
        let policy = ReconnectPolicy(budgets: [.transient: 0], giveUpClasses: [.transient])
        var h = try Self.ready(policy: policy)
        _ = h.feed(.disconnected(nil))
        #expect(h.state == .suspended(.gaveUp(.transient)))
        _ = h.feed(.linkLossExplained(adapter: hci0, cause: .adapterPoweredOff))
        #expect(h.state == .connecting(adapter: nil))
        #expect(h.machine.reconnect.failuresByClass.isEmpty)
    }

    // MARK: - Kept

    @Test func anExplanationForAnotherAdapterChangesNothing() throws {
        var h = try Self.ready(alsoPowered: hci1)
        _ = h.feed(.disconnected(nil))
        let reconnect = h.machine.reconnect
        let state = h.state
        #expect(h.feed(.linkLossExplained(adapter: hci1, cause: .adapterPoweredOff)).isEmpty)
        #expect(h.machine.reconnect == reconnect && h.state == state)
    }

    @Test func aLossWithAReasonIsNotTakenBack() throws {
        var h = try Self.ready()
        _ = h.feed(.disconnected(Failures.remoteReason))
        let reconnect = h.machine.reconnect
        #expect(h.feed(.linkLossExplained(adapter: hci0, cause: .adapterPoweredOff)).isEmpty)
        #expect(h.machine.reconnect == reconnect)
    }

    @Test func aLossExplainedAfterANewerFailureKeepsTheNewerFailureAndItself() throws {
        var h = try Self.ready()
        _ = h.feed(.disconnected(nil))
        _ = try h.fire(.backoff)
        _ = h.feed(.attemptGranted(adapter: hci0))
        _ = h.feed(.connected)
        // Services never resolve: the machine drops the link itself (a newer failure, of the
        // device, in a newer session).
        _ = try h.fire(.discovery)
        let reconnect = h.machine.reconnect
        #expect(reconnect.consecutiveFailures == 2)
        let state = h.state
        // The explanation of the first loss arrives now: it may not undo the newer failure, and
        // the older one is no longer the latest.
        let explained = h.feed(.linkLossExplained(adapter: hci0, cause: .adapterPoweredOff))
        #expect(Self.withdrawals(explained).isEmpty)
        #expect(h.machine.reconnect == reconnect && h.state == state)
    }

    /// A newer failed attempt on the same adapter is itself what the fleet explains (it keeps
    /// every failed attempt too): that one is taken back, never the older loss beneath it.
    @Test func aNewerFailedAttemptOnTheSameAdapterIsWhatIsTakenBack() throws {
        var h = try Self.ready()
        _ = h.feed(.disconnected(nil))
        let afterTheLoss = h.machine.reconnect
        _ = try h.fire(.backoff)
        _ = h.feed(.attemptGranted(adapter: hci0))
        // The attempt hangs until the connect timer fails it.
        _ = try h.fire(.connect)
        #expect(h.machine.reconnect.consecutiveFailures == 2)
        let explained = h.feed(.linkLossExplained(adapter: hci0, cause: .adapterPoweredOff))
        #expect(Self.withdrawals(explained) == [withdrawn(h, cause: .adapterPoweredOff)])
        #expect(h.machine.reconnect == afterTheLoss, "the loss before it stays counted")
        #expect(Self.withdrawals(h.feed(.linkLossExplained(adapter: hci0, cause: .adapterPoweredOff))).isEmpty)
    }

    @Test func aNewerFailureOnAnotherAdapterIsKept() throws {
        var h = try Self.ready(alsoPowered: hci1)
        _ = h.feed(.disconnected(nil))
        _ = try h.fire(.backoff)
        _ = h.feed(.attemptGranted(adapter: hci1))
        _ = h.feed(.connectFailed(Failures.abortByRemote))
        let reconnect = h.machine.reconnect
        #expect(h.feed(.linkLossExplained(adapter: hci0, cause: .adapterPoweredOff)).isEmpty)
        #expect(h.machine.reconnect == reconnect)
        #expect(reconnect.consecutiveFailures == 2)
    }

    /// Seen on the real stack: the first retry was granted before the power-off that explains
    /// the loss was heard. The failure is taken back; the attempt in flight goes on.
    @Test func aLossExplainedWhileItsRetryIsInFlightIsTakenBackAndTheAttemptGoesOn() throws {
        var h = try Self.ready()
        let before = h.machine.reconnect
        _ = h.feed(.disconnected(nil))
        _ = try h.fire(.backoff)
        _ = h.feed(.attemptGranted(adapter: hci0))
        #expect(Self.withdrawals(h.feed(.linkLossExplained(adapter: hci0, cause: .adapterPoweredOff))).count == 1)
        #expect(h.machine.reconnect == before)
        #expect(h.state == .connecting(adapter: hci0), "the attempt in flight goes on")
    }

    /// Seen on the real stack under load: the loss's first retry (250 ms later) failed on the
    /// same adapter before the power-off that ended both was heard. Both failures are the
    /// power-off's: the explanation takes back the retry's and the loss's, newest first.
    @Test func aLossExplainedAfterItsFirstRetryFailedTooTakesBackBoth() throws {
        var h = try Self.ready()
        let before = h.machine.reconnect
        _ = h.feed(.disconnected(nil))
        let lossSession = h.machine.session
        _ = try h.fire(.backoff)
        _ = h.feed(.attemptGranted(adapter: hci0))
        _ = h.feed(.connectFailed(DeviceEvent.Failure(name: "org.bluez.Error.Failed", message: "le-connection-abort-by-local")))
        #expect(h.machine.reconnect.consecutiveFailures == 2)
        let explained = h.feed(.linkLossExplained(adapter: hci0, cause: .adapterPoweredOff))
        #expect(Self.withdrawals(explained) == [
            .emit(.failureWithdrawn(.transient, cause: .adapterPoweredOff, session: lossSession + 1)),
            .emit(.failureWithdrawn(.transient, cause: .adapterPoweredOff, session: lossSession)),
        ])
        #expect(h.machine.reconnect == before, "budget, backoff step and breaker as before the loss")
        #expect(h.state == .connecting(adapter: nil))
        #expect(Self.withdrawals(h.feed(.linkLossExplained(adapter: hci0, cause: .bluetoothdGone))).isEmpty, "once")
    }

    /// A retry that connected, then lost its link too: the loss before it happened before a
    /// connection succeeded, so not through the power-off that explains the second; only the
    /// second is taken back (a reviewer's case).
    @Test func aLinkThatCameUpStartsAChainOfItsOwn() throws {
        var h = try Self.ready()
        _ = h.feed(.disconnected(nil))
        let afterFirstLoss = h.machine.reconnect
        _ = try h.fire(.backoff)
        _ = h.feed(.attemptGranted(adapter: hci0))
        _ = h.feed(.connected)
        _ = h.feed(.disconnected(nil))
        #expect(h.machine.reconnect.consecutiveFailures == 2)
        let explained = h.feed(.linkLossExplained(adapter: hci0, cause: .adapterPoweredOff))
        #expect(Self.withdrawals(explained) == [withdrawn(h, cause: .adapterPoweredOff)])
        #expect(h.machine.reconnect == afterFirstLoss, "the first loss stays counted")
    }

    /// A retry that failed later than the window after the loss is not the same cause's: only
    /// the newest failure is taken back.
    @Test func aRetryFailingLaterThanTheWindowAfterTheLossStartsAChainOfItsOwn() throws {
        var h = try Self.ready()
        _ = h.feed(.disconnected(nil))
        let afterLoss = h.machine.reconnect
        _ = try h.fire(.backoff)
        _ = h.feed(.attemptGranted(adapter: hci0))
        h.now = h.now.advanced(by: FleetStateMachine.linkLossCauseWindow)
        _ = h.feed(.connectFailed(Failures.abortByRemote))
        #expect(Self.withdrawals(h.feed(.linkLossExplained(adapter: hci0, cause: .adapterPoweredOff))).count == 1)
        #expect(h.machine.reconnect == afterLoss, "the loss stays counted")
    }

    /// A row of failures on one adapter longer than `longestExplainableChain` is the device's
    /// own: an explanation takes back no more than the chain's length.
    @Test func noMoreThanTheLongestChainIsTakenBack() throws {
        // Retries 10 ms apart and no breaker or budget in the way: the whole row is inside the window.
        let policy = ReconnectPolicy(
            baseDelay: .milliseconds(10), maxDelay: .milliseconds(10), jitterFraction: 0, fastFirstRetryDelay: .milliseconds(10),
            budgets: [.transient: 100], breakerThreshold: 100)
        var h = try Self.ready(policy: policy)
        let before = h.machine.reconnect
        _ = h.feed(.disconnected(nil))
        for _ in 0..<DeviceStateMachine.longestExplainableChain {
            _ = try h.fire(.backoff)
            _ = h.feed(.attemptGranted(adapter: hci0))
            _ = h.feed(.connectFailed(Failures.abortByRemote))
        }
        let failures = h.machine.reconnect.consecutiveFailures
        #expect(failures == DeviceStateMachine.longestExplainableChain + 1)
        let withdrawals = Self.withdrawals(h.feed(.linkLossExplained(adapter: hci0, cause: .adapterPoweredOff)))
        #expect(withdrawals.count == DeviceStateMachine.longestExplainableChain)
        #expect(h.machine.reconnect.consecutiveFailures == 1, "the loss, the row's first, stays counted")
        #expect(h.machine.reconnect != before)
    }

    /// An explanation that comes later than `linkLossCauseWindow` after the failure is for
    /// something else (a reviewer's case: a real loss, its retry waiting 20 s on a device out of
    /// range, then the adapter powered off).
    @Test func anExplanationLaterThanTheWindowTakesNothingBack() throws {
        var h = try Self.ready()
        _ = h.feed(.disconnected(nil))
        let reconnect = h.machine.reconnect
        h.now = h.now.advanced(by: FleetStateMachine.linkLossCauseWindow + .milliseconds(1))
        #expect(Self.withdrawals(h.feed(.linkLossExplained(adapter: hci0, cause: .adapterPoweredOff))).isEmpty)
        #expect(h.machine.reconnect == reconnect)
    }

    @Test func anOperatorsReconnectInBetweenLeavesNothingToTakeBack() throws {
        var h = try Self.ready()
        _ = h.feed(.disconnected(nil))
        _ = h.feed(.reconnectRequested)
        let reconnect = h.machine.reconnect
        #expect(Self.withdrawals(h.feed(.linkLossExplained(adapter: hci0, cause: .adapterPoweredOff))).isEmpty)
        #expect(h.machine.reconnect == reconnect)
    }

    @Test func aFailureIsTakenBackOnlyOnce() throws {
        var h = try Self.ready()
        _ = h.feed(.disconnected(nil))
        #expect(Self.withdrawals(h.feed(.linkLossExplained(adapter: hci0, cause: .adapterPoweredOff))).count == 1)
        #expect(Self.withdrawals(h.feed(.linkLossExplained(adapter: hci0, cause: .bluetoothdGone))).isEmpty)
    }

    /// The adapter heard first (BlueZ's `PowerState` "on-disabling"): the link's end is an
    /// environment event already, and its explanation finds no failure to take back.
    @Test func aLinkTheAdapterEndedFirstHasNoFailureToTakeBack() throws {
        var h = try Self.ready()
        _ = h.feed(.adapterUnpowered(hci0))
        _ = h.feed(.disconnected(nil))
        #expect(h.machine.reconnect.consecutiveFailures == 0)
        #expect(h.feed(.linkLossExplained(adapter: hci0, cause: .adapterPoweredOff)).isEmpty)
    }
}
