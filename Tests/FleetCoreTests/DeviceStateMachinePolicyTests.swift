import Testing
@testable import FleetCore

/// The pool policy says who should be connected; "not wanted" releases everything.
@Suite struct DeviceStateMachinePolicyTests {
    let hci0 = DeviceHarness.hci0

    @Test func anUnwantedReadyDeviceIsDisconnected() throws {
        var h = try DeviceHarness.ready()
        let effects = h.feed(.policyUpdated(wanted: false))
        #expect(effects == [.disconnect, h.changed(from: .ready, to: .idle)])
    }

    @Test func anUnwantedDeviceDuringSetupIsDisconnectedAndItsTimerCancelled() throws {
        var h = try DeviceHarness.settingUp()
        let effects = h.feed(.policyUpdated(wanted: false))
        #expect(effects == [.cancelTimer(.subscribe), .disconnect, h.changed(from: .discovering, to: .idle)])
    }

    @Test func anUnwantedDeviceMidConnectCancelsAndReleasesTheSlot() throws {
        var h = try DeviceHarness.connecting()
        let effects = h.feed(.policyUpdated(wanted: false))
        #expect(effects == [
            .cancelTimer(.connect), .cancelConnect, .attemptFinished(adapter: hci0, outcome: .cancelled),
            h.changed(from: .connecting(adapter: hci0), to: .idle),
        ])
    }

    @Test func anUnwantedDeviceWaitingForAGrantWithdrawsItsRequest() throws {
        var h = try DeviceHarness.awaitingGrant()
        let effects = h.feed(.policyUpdated(wanted: false))
        #expect(effects == [.withdrawAttemptRequest, h.changed(from: .connecting(adapter: nil), to: .idle)])
    }

    @Test func anUnwantedDeviceStopsSearching() throws {
        var h = try DeviceHarness.idle(deviceKnown: false)
        _ = h.feed(.policyUpdated(wanted: true))
        let effects = h.feed(.policyUpdated(wanted: false))
        #expect(effects == [.cancelTimer(.resolve), .stopResolve, h.changed(from: .resolving, to: .idle)])
    }

    @Test func anUnwantedDeviceStopsBackingOff() throws {
        var h = try DeviceHarness.connecting()
        _ = h.feed(.connectFailed(Failures.abortByRemote))
        let backingOff = h.state
        let effects = h.feed(.policyUpdated(wanted: false))
        #expect(effects == [.cancelTimer(.backoff), h.changed(from: backingOff, to: .idle)])
    }

    @Test func aGrantThatArrivesAfterTheRequestWasWithdrawnIsHandedBack() throws {
        var h = try DeviceHarness.awaitingGrant()
        _ = h.feed(.policyUpdated(wanted: false))
        #expect(h.feed(.attemptGranted(adapter: hci0)) == [.attemptFinished(adapter: hci0, outcome: .cancelled)])
        #expect(h.state == .idle)
    }

    @Test func beingWantedAgainWhileAlreadyPursuingChangesNothing() throws {
        var h = try DeviceHarness.connecting()
        #expect(h.feed(.policyUpdated(wanted: true)) == [])
        #expect(h.feed(.restoreRequested) == [])
    }

    @Test func anIdleDeviceIgnoresLinkEvents() throws {
        var h = try DeviceHarness.idle()
        #expect(h.feed(.disconnected(Failures.remoteReason)) == [])
        #expect(h.feed(.servicesResolved(services: [], characteristics: [])) == [])
        #expect(h.feed(.notificationsEnabled(characteristic: UUIDs.heartRateMeasurement)) == [])
    }

    @Test func anOpenBreakerSurvivesBeingUnwantedAndWantedAgain() throws {
        var h = try DeviceHarness.discovering()
        for _ in 1...3 {
            _ = h.feed(.servicesResolved(services: [], characteristics: []))
            if h.machine.isArmed(.backoff) {
                _ = try h.fire(.backoff)
                _ = h.feed(.attemptGranted(adapter: hci0))
                _ = h.feed(.connected)
            }
        }
        let open = h.state
        #expect(h.feed(.policyUpdated(wanted: false)) == [.cancelTimer(.suspension), h.changed(from: open, to: .idle)])
        guard case .suspended(.circuitOpen(let until)) = open else {
            Issue.record("expected an open breaker, got \(open)")
            return
        }
        // Toggling the policy is no way around the cooldown.
        let effects = h.feed(.policyUpdated(wanted: true))
        #expect(effects == [h.scheduled(.suspension, at: until), h.changed(from: .idle, to: open)])
    }
}
