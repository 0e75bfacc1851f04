import Testing
@testable import FleetCore

/// bluetoothd and adapters coming and going: the device releases what it holds and waits,
/// without counting the outage against itself.
@Suite struct DeviceStateMachineEnvironmentTests {
    let hci0 = DeviceHarness.hci0
    let hci1 = DeviceHarness.hci1

    @Test func aDeviceWantedBeforeBluetoothdIsSeenWaitsForIt() throws {
        let address = try #require(BluetoothAddress("C0:FF:EE:00:00:02"))
        var machine = DeviceStateMachine(device: DeviceID(address: address))
        var random = SeededRandom(seed: 1)
        let effects = machine.reduce(.policyUpdated(wanted: true), now: .zero, random: &random)
        #expect(effects == [.emit(.stateChanged(from: .idle, to: .suspended(.bluetoothdUnavailable), session: 0, cause: nil))])
    }

    @Test func bluetoothdVanishingFromUnderAReadyLinkSuspendsWithoutAFailure() throws {
        var h = try DeviceHarness.ready()
        let effects = h.feed(.bluetoothdVanished)
        #expect(effects == [h.changed(from: .ready, to: .suspended(.bluetoothdUnavailable))])
        #expect(h.machine.reconnect.consecutiveFailures == 0)
    }

    @Test func bluetoothdVanishingWithdrawsAQueuedAttempt() throws {
        var h = try DeviceHarness.awaitingGrant()
        let effects = h.feed(.bluetoothdVanished)
        #expect(effects == [.withdrawAttemptRequest, h.changed(from: .connecting(adapter: nil), to: .suspended(.bluetoothdUnavailable))])
    }

    @Test func bluetoothdVanishingEndsAnInFlightAttempt() throws {
        var h = try DeviceHarness.connecting()
        let effects = h.feed(.bluetoothdVanished)
        #expect(effects == [
            .cancelTimer(.connect), .attemptFinished(adapter: hci0, outcome: .cancelled),
            h.changed(from: .connecting(adapter: hci0), to: .suspended(.bluetoothdUnavailable)),
        ])
    }

    @Test func aReturningBluetoothdWaitsForItsAdaptersAgain() throws {
        var h = try DeviceHarness.ready()
        _ = h.feed(.bluetoothdVanished)
        let effects = h.feed(.bluetoothdAppeared)
        #expect(effects == [h.changed(from: .suspended(.bluetoothdUnavailable), to: .suspended(.noPoweredAdapter))])
    }

    @Test func aPoweredAdapterAfterABluetoothdRestartStartsAFreshSearch() throws {
        var h = try DeviceHarness.ready()
        _ = h.feed(.bluetoothdVanished)
        _ = h.feed(.bluetoothdAppeared)
        let effects = h.feed(.adapterPowered(hci0))
        // bluetoothd forgot its objects: the device must be found again.
        #expect(effects == [
            .startResolve, h.scheduled(.resolve, after: .seconds(30)),
            h.changed(from: .suspended(.noPoweredAdapter), to: .resolving),
        ])
    }

    @Test func losingTheOnlyPoweredAdapterWithdrawsAQueuedAttempt() throws {
        var h = try DeviceHarness.awaitingGrant()
        let effects = h.feed(.adapterUnpowered(hci0))
        #expect(effects == [.withdrawAttemptRequest, h.changed(from: .connecting(adapter: nil), to: .suspended(.noPoweredAdapter))])
    }

    @Test func losingTheLinkAdapterWhileAnotherIsPoweredAsksForANewAttempt() throws {
        var h = try DeviceHarness.ready()
        _ = h.feed(.adapterPowered(hci1))
        let effects = h.feed(.adapterUnpowered(hci0))
        #expect(effects == [.requestAttempt, h.changed(from: .ready, to: .connecting(adapter: nil))])
        #expect(h.machine.reconnect.consecutiveFailures == 0)
    }

    @Test func losingTheAdapterOfAnInFlightAttemptReportsItToTheGate() throws {
        var h = try DeviceHarness.connecting()
        let effects = h.feed(.adapterUnpowered(hci0))
        #expect(effects == [
            .cancelTimer(.connect), .attemptFinished(adapter: hci0, outcome: .failed(.bluetoothOff)),
            h.changed(from: .connecting(adapter: hci0), to: .suspended(.noPoweredAdapter)),
        ])
    }

    @Test func losingAnUnrelatedAdapterChangesNothing() throws {
        var h = try DeviceHarness.ready()
        _ = h.feed(.adapterPowered(hci1))
        #expect(h.feed(.adapterUnpowered(hci1)) == [])
        #expect(h.state == .ready)
    }

    @Test func aPoweredAdapterEndsTheWait() throws {
        var h = try DeviceHarness.awaitingGrant()
        _ = h.feed(.adapterUnpowered(hci0))
        let effects = h.feed(.adapterPowered(hci0))
        #expect(effects == [.requestAttempt, h.changed(from: .suspended(.noPoweredAdapter), to: .connecting(adapter: nil))])
    }

    @Test func aBluetoothdRestartDoesNotRetryADeviceGivenUpOn() throws {
        var h = try DeviceHarness.connecting(policy: ReconnectPolicy(budgets: [.denied: 0]))
        _ = h.feed(.connectFailed(Failures.notAuthorized))
        #expect(h.feed(.bluetoothdVanished) == [])
        #expect(h.feed(.bluetoothdAppeared) == [])
        #expect(h.state == .suspended(.gaveUp(.denied)))
    }
}
