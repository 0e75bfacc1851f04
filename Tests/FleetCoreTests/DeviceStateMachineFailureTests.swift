import Testing
@testable import FleetCore

/// Failures: every one releases what the attempt held, is classified once, and ends in the
/// reconnect controller's decision.
@Suite struct DeviceStateMachineFailureTests {
    let hci0 = DeviceHarness.hci0

    @Test func aFailedConnectReleasesTheSlotAndBacksOff() throws {
        var h = try DeviceHarness.connecting()
        let effects = h.feed(.connectFailed(Failures.abortByRemote))
        let deadline = try #require(h.deadline(of: .backoff))
        #expect(effects == [
            .cancelTimer(.connect), .attemptFinished(adapter: hci0, outcome: .failed(.transient)),
            h.failed(.transient, Failures.abortByRemote), h.scheduled(.backoff, at: deadline),
            h.changed(from: .connecting(adapter: hci0), to: .backingOff(attempt: 1, deadline: deadline), cause: .transient),
        ])
        // The first backoff is the base delay (the jitter range is [base, base]).
        #expect(deadline == h.now + .seconds(1))
    }

    @Test func aSlotLimitFailureTellsTheGateTheAdapterIsFull() throws {
        var h = try DeviceHarness.connecting()
        let effects = h.feed(.connectFailed(Failures.slotLimit))
        #expect(effects.contains(.attemptFinished(adapter: hci0, outcome: .failed(.outOfSlots))))
    }

    @Test func aConnectThatHangsIsCancelledAndCountsAsTransient() throws {
        var h = try DeviceHarness.connecting()
        let effects = try h.fire(.connect)
        let deadline = try #require(h.deadline(of: .backoff))
        #expect(effects == [
            .cancelConnect, .attemptFinished(adapter: hci0, outcome: .failed(.transient)),
            h.failed(.transient), h.scheduled(.backoff, at: deadline),
            h.changed(from: .connecting(adapter: hci0), to: .backingOff(attempt: 1, deadline: deadline), cause: .transient),
        ])
    }

    @Test func theEndOfABackoffAsksForAnotherAttempt() throws {
        var h = try DeviceHarness.connecting()
        _ = h.feed(.connectFailed(Failures.abortByRemote))
        let backingOff = h.state
        let effects = try h.fire(.backoff)
        #expect(effects == [.requestAttempt, h.changed(from: backingOff, to: .connecting(adapter: nil))])
    }

    @Test func aMissingRequiredServiceIsAProtocolFailureThatDropsTheLink() throws {
        var h = try DeviceHarness.discovering()
        let effects = h.feed(.servicesResolved(services: [UUIDs.batteryService], characteristics: [UUIDs.batteryLevel]))
        let deadline = try #require(h.deadline(of: .backoff))
        let missing = DeviceEvent.Failure(
            kind: .notSupported, name: DeviceStateMachine.missingGATTName, message: "required services \(UUIDs.heartRateService), characteristics \(UUIDs.heartRateMeasurement) not found")
        #expect(effects == [
            .cancelTimer(.discovery), h.persisted(connectedNow: false), .disconnect,
            h.failed(.protocol, missing), h.scheduled(.backoff, at: deadline),
            h.changed(from: .discovering, to: .backingOff(attempt: 1, deadline: deadline), cause: .protocol),
        ])
    }

    @Test func aMissingRequiredCharacteristicIsAProtocolFailure() throws {
        var h = try DeviceHarness.discovering()
        let effects = h.feed(.servicesResolved(services: DeviceHarness.strapServices, characteristics: [UUIDs.batteryLevel]))
        #expect(effects.contains { effect in
            if case .emit(.failed(.protocol, let error?, _)) = effect { error.message.contains("characteristics") } else { false }
        })
        #expect(effects.contains(.disconnect))
    }

    @Test func servicesThatNeverResolveDropTheLink() throws {
        var h = try DeviceHarness.discovering()
        let effects = try h.fire(.discovery)
        let deadline = try #require(h.deadline(of: .backoff))
        #expect(effects == [
            .disconnect, h.failed(.transient), h.scheduled(.backoff, at: deadline),
            h.changed(from: .discovering, to: .backingOff(attempt: 1, deadline: deadline), cause: .transient),
        ])
    }

    @Test func losingAReadyLinkRetriesFast() throws {
        var h = try DeviceHarness.ready()
        h.advance(by: .seconds(120))
        let effects = h.feed(.disconnected(Failures.remoteReason))
        let deadline = h.now + .milliseconds(250)
        #expect(effects == [
            h.failed(.transient, Failures.remoteReason), h.scheduled(.backoff, at: deadline),
            h.changed(from: .ready, to: .backingOff(attempt: 1, deadline: deadline), cause: .transient),
        ])
    }

    @Test func aLinkLossWithoutAReasonIsTransient() throws {
        var h = try DeviceHarness.ready()
        let effects = h.feed(.disconnected(nil))
        #expect(effects.first == h.failed(.transient))
    }

    @Test func aConnectToAnObjectAlreadyGoneLooksForTheDeviceWithoutAFailure() throws {
        var h = try DeviceHarness.connecting()
        let effects = h.feed(.connectFailed(Failures.unknownObject))
        #expect(effects == [
            .cancelTimer(.connect), .attemptFinished(adapter: hci0, outcome: .cancelled),
            .startResolve, h.scheduled(.resolve, after: .seconds(30)),
            h.changed(from: .connecting(adapter: hci0), to: .resolving),
        ])
        #expect(h.machine.reconnect.consecutiveFailures == 0)
        #expect(h.machine.knownAdapter == nil)
    }

    @Test func aSecondVanishedObjectInARowIsGoneAndRediscoveredBeforeTheNextConnect() throws {
        var h = try DeviceHarness.connecting()
        _ = h.feed(.connectFailed(Failures.unknownObject))
        _ = h.feed(.deviceFound(adapter: hci0))
        _ = h.feed(.attemptGranted(adapter: hci0))
        let effects = h.feed(.connectFailed(Failures.unknownObject))
        #expect(effects.contains(.attemptFinished(adapter: hci0, outcome: .failed(.gone))))
        #expect(effects.contains(h.failed(.gone, Failures.unknownObject)))
        let backingOff = h.state
        let resumed = try h.fire(.backoff)
        #expect(resumed == [
            .startResolve, h.scheduled(.resolve, after: .seconds(30)),
            h.changed(from: backingOff, to: .resolving),
        ])
    }

    @Test func aLinkBetweenTwoVanishedObjectsMakesTheSecondFreeAgain() throws {
        var h = try DeviceHarness.connecting()
        _ = h.feed(.deviceLost)
        _ = h.feed(.deviceFound(adapter: hci0))
        _ = h.feed(.attemptGranted(adapter: hci0))
        _ = h.feed(.connected)
        _ = h.feed(.disconnected(Failures.remoteReason))
        let backingOff = h.state
        _ = try h.fire(.backoff)
        _ = h.feed(.attemptGranted(adapter: hci0))
        #expect(h.state == .connecting(adapter: hci0), "from \(backingOff)")
        let failuresBefore = h.machine.reconnect.consecutiveFailures
        let effects = h.feed(.deviceLost)
        #expect(effects.contains(.attemptFinished(adapter: hci0, outcome: .cancelled)))
        #expect(h.state == .resolving)
        #expect(h.machine.reconnect.consecutiveFailures == failuresBefore)
    }

    @Test func losingTheDeviceObjectWhileReadyIsAGoneFailure() throws {
        var h = try DeviceHarness.ready()
        let effects = h.feed(.deviceLost)
        #expect(effects.first == h.failed(.gone))
        #expect(h.machine.knownAdapter == nil)
    }

    @Test func losingTheDeviceObjectWhileWaitingForAGrantResolvesWithoutAFailure() throws {
        var h = try DeviceHarness.awaitingGrant()
        let effects = h.feed(.deviceLost)
        #expect(effects == [
            .withdrawAttemptRequest, .startResolve, h.scheduled(.resolve, after: .seconds(30)),
            h.changed(from: .connecting(adapter: nil), to: .resolving),
        ])
        #expect(h.machine.reconnect.consecutiveFailures == 0)
    }

    @Test func aSearchThatFindsNothingCountsAsGoneAndSearchesAgainLater() throws {
        var h = try DeviceHarness.idle(deviceKnown: false)
        _ = h.feed(.policyUpdated(wanted: true))
        let effects = try h.fire(.resolve)
        let deadline = try #require(h.deadline(of: .backoff))
        #expect(effects == [
            .stopResolve, h.failed(.gone), h.scheduled(.backoff, at: deadline),
            h.changed(from: .resolving, to: .backingOff(attempt: 1, deadline: deadline), cause: .gone),
        ])
    }

    @Test func repeatedProtocolFailuresOpenTheCircuitBreaker() throws {
        var h = try DeviceHarness.discovering()
        for _ in 1...2 {
            _ = h.feed(.servicesResolved(services: [], characteristics: []))
            _ = try h.fire(.backoff)
            _ = h.feed(.attemptGranted(adapter: hci0))
            _ = h.feed(.connected)
        }
        let effects = h.feed(.servicesResolved(services: [], characteristics: []))
        let until = h.now + .seconds(60)
        let missing = DeviceStateMachine.missingGATT(
            services: h.machine.configuration.requiredServices, characteristics: h.machine.configuration.requiredCharacteristics)
        #expect(effects == [
            .cancelTimer(.discovery), .disconnect, h.failed(.protocol, missing), h.scheduled(.suspension, at: until),
            h.changed(from: .discovering, to: .suspended(.circuitOpen(until: until)), cause: .protocol),
        ])
    }

    @Test func anOpenBreakerAllowsOneProbeAfterItsCooldown() throws {
        var h = try DeviceHarness.discovering()
        for _ in 1...3 {
            _ = h.feed(.servicesResolved(services: [], characteristics: []))
            if h.machine.isArmed(.backoff) {
                _ = try h.fire(.backoff)
                _ = h.feed(.attemptGranted(adapter: hci0))
                _ = h.feed(.connected)
            }
        }
        let suspended = h.state
        let effects = try h.fire(.suspension)
        #expect(effects == [.requestAttempt, h.changed(from: suspended, to: .connecting(adapter: nil))])
        #expect(h.machine.reconnect.breaker == .halfOpen)
    }

    @Test func refusedAuthorizationGivesUpOnceItsBudgetIsSpent() throws {
        var h = try DeviceHarness.connecting()
        for _ in 1...2 {
            _ = h.feed(.connectFailed(Failures.notAuthorized))
            _ = try h.fire(.backoff)
            _ = h.feed(.attemptGranted(adapter: hci0))
        }
        let effects = h.feed(.connectFailed(Failures.notAuthorized))
        #expect(effects == [
            .cancelTimer(.connect), .attemptFinished(adapter: hci0, outcome: .failed(.denied)),
            h.failed(.denied, Failures.notAuthorized),
            h.changed(from: .connecting(adapter: hci0), to: .suspended(.gaveUp(.denied)), cause: .denied),
        ])
    }

    @Test func aDeviceGivenUpOnIsPursuedAgainWhenRequestedAgain() throws {
        var h = try DeviceHarness.connecting(policy: ReconnectPolicy(budgets: [.denied: 0]))
        _ = h.feed(.connectFailed(Failures.notAuthorized))
        let effects = h.feed(.policyUpdated(wanted: true))
        #expect(effects == [.requestAttempt, h.changed(from: .suspended(.gaveUp(.denied)), to: .connecting(adapter: nil))])
        #expect(h.machine.reconnect.failuresByClass.isEmpty)
    }

    @Test func anExhaustedBudgetSuspendsForTheCooldown() throws {
        var h = try DeviceHarness.connecting(policy: ReconnectPolicy(budgets: [.transient: 0]))
        let effects = h.feed(.connectFailed(Failures.abortByRemote))
        let until = h.now + .seconds(300)
        #expect(effects == [
            .cancelTimer(.connect), .attemptFinished(adapter: hci0, outcome: .failed(.transient)),
            h.failed(.transient, Failures.abortByRemote), h.scheduled(.suspension, at: until),
            h.changed(from: .connecting(adapter: hci0), to: .suspended(.budgetExhausted(.transient, until: until)), cause: .transient),
        ])
    }

    @Test func seeingTheDeviceAgainEndsABudgetSuspensionEarly() throws {
        var h = try DeviceHarness.connecting(policy: ReconnectPolicy(budgets: [.transient: 0]))
        _ = h.feed(.connectFailed(Failures.abortByRemote))
        let suspended = h.state
        let effects = h.feed(.deviceFound(adapter: hci0))
        #expect(effects == [.cancelTimer(.suspension), .requestAttempt, h.changed(from: suspended, to: .connecting(adapter: nil))])
    }

    @Test func aConnectErrorOutsideAnAttemptIsIgnored() throws {
        var h = try DeviceHarness.ready()
        #expect(h.feed(.connectFailed(Failures.abortByRemote)) == [])
        #expect(h.state == .ready)
    }

    @Test func aDisconnectWhileBackingOffIsIgnored() throws {
        var h = try DeviceHarness.connecting()
        _ = h.feed(.connectFailed(Failures.abortByRemote))
        let backingOff = h.state
        #expect(h.feed(.disconnected(Failures.remoteReason)) == [])
        #expect(h.state == backingOff)
    }

    @Test func losingTheDeviceObjectMidConnectLooksForItAgainWithoutAFailure() throws {
        var h = try DeviceHarness.connecting()
        let effects = h.feed(.deviceLost)
        #expect(effects == [
            .cancelTimer(.connect), .attemptFinished(adapter: hci0, outcome: .cancelled),
            .startResolve, h.scheduled(.resolve, after: .seconds(30)),
            h.changed(from: .connecting(adapter: hci0), to: .resolving),
        ])
        #expect(h.machine.reconnect.consecutiveFailures == 0)
    }

    @Test func losingTheDeviceObjectMidConnectTwiceInARowReleasesTheSlotAsGone() throws {
        var h = try DeviceHarness.connecting()
        _ = h.feed(.deviceLost)
        _ = h.feed(.deviceFound(adapter: hci0))
        _ = h.feed(.attemptGranted(adapter: hci0))
        let effects = h.feed(.deviceLost)
        let deadline = try #require(h.deadline(of: .backoff))
        #expect(effects == [
            .cancelTimer(.connect), .attemptFinished(adapter: hci0, outcome: .failed(.gone)),
            h.failed(.gone), h.scheduled(.backoff, at: deadline),
            h.changed(from: .connecting(adapter: hci0), to: .backingOff(attempt: 1, deadline: deadline), cause: .gone),
        ])
    }
}
