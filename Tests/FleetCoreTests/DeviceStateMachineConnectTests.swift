import Testing
@testable import FleetCore

/// The happy path, one step at a time: from "wanted" to `ready`.
@Suite struct DeviceStateMachineConnectTests {
    let hci0 = DeviceHarness.hci0

    @Test func wantedDeviceKnownToBlueZAsksTheFleetGateForAnAttempt() throws {
        var h = try DeviceHarness.idle()
        let effects = h.feed(.policyUpdated(wanted: true))
        // It never connects on its own: the pool decides when and where.
        #expect(effects == [.requestAttempt, h.changed(from: .idle, to: .connecting(adapter: nil))])
    }

    @Test func wantedDeviceUnknownToBlueZIsResolvedFirst() throws {
        var h = try DeviceHarness.idle(deviceKnown: false)
        let effects = h.feed(.policyUpdated(wanted: true))
        #expect(effects == [.startResolve, h.scheduled(.resolve, after: .seconds(30)), h.changed(from: .idle, to: .resolving)])
    }

    @Test func findingTheDeviceWhileResolvingAsksForAnAttempt() throws {
        var h = try DeviceHarness.idle(deviceKnown: false)
        _ = h.feed(.policyUpdated(wanted: true))
        let effects = h.feed(.deviceFound(adapter: hci0))
        #expect(effects == [
            .cancelTimer(.resolve), .stopResolve, .requestAttempt,
            h.changed(from: .resolving, to: .connecting(adapter: nil)),
        ])
    }

    @Test func restoreRequestedPursuesTheDeviceLikeThePolicy() throws {
        var h = try DeviceHarness.idle()
        let effects = h.feed(.restoreRequested)
        #expect(effects == [.requestAttempt, h.changed(from: .idle, to: .connecting(adapter: nil))])
        #expect(h.machine.isWanted)
    }

    @Test func grantedAttemptConnectsUnderATimeout() throws {
        var h = try DeviceHarness.awaitingGrant()
        let effects = h.feed(.attemptGranted(adapter: hci0))
        #expect(effects == [
            .connect(adapter: hci0), h.scheduled(.connect, after: .seconds(45)),
            h.changed(from: .connecting(adapter: nil), to: .connecting(adapter: hci0)),
        ])
    }

    @Test func anAttemptWithNoObjectToConnectThroughLooksForTheDeviceAndCountsNothing() throws {
        var h = try DeviceHarness.connecting()
        let effects = h.feed(.connectNeedsDiscovery)
        // The slot goes back unused (cancelled, not failed), no failure is emitted, and the
        // device is looked for by discovery.
        #expect(effects == [
            .cancelTimer(.connect), .attemptFinished(adapter: hci0, outcome: .cancelled),
            .startResolve, h.scheduled(.resolve, after: .seconds(30)),
            h.changed(from: .connecting(adapter: hci0), to: .resolving),
        ])
        #expect(h.machine.reconnect.consecutiveFailures == 0)
        // Found: it asks for an attempt again.
        let found = h.feed(.deviceFound(adapter: hci0))
        #expect(found.contains(.requestAttempt))
        // Outside an attempt it means nothing.
        var idle = try DeviceHarness.idle()
        #expect(idle.feed(.connectNeedsDiscovery).isEmpty)
    }

    @Test func everyGrantedAttemptStartsANewSession() throws {
        var h = try DeviceHarness.connecting()
        #expect(h.machine.session == 1)
        _ = h.feed(.connectFailed(Failures.abortByRemote))
        _ = try h.fire(.backoff)
        _ = h.feed(.attemptGranted(adapter: hci0))
        #expect(h.machine.session == 2)
    }

    @Test func connectedReleasesTheAttemptAndAwaitsServicesUnderATimeout() throws {
        var h = try DeviceHarness.connecting()
        let effects = h.feed(.connected)
        #expect(effects == [
            .cancelTimer(.connect), .attemptFinished(adapter: hci0, outcome: .connected),
            .awaitServices, h.scheduled(.discovery, after: .seconds(30)),
            h.changed(from: .connecting(adapter: hci0), to: .discovering),
        ])
    }

    @Test func resolvedServicesArePersistedThenReadAndSubscribedUnderATimeout() throws {
        var h = try DeviceHarness.discovering()
        let effects = h.feed(.servicesResolved(services: DeviceHarness.strapServices, characteristics: DeviceHarness.strapCharacteristics))
        #expect(effects == [
            .cancelTimer(.discovery),
            h.persisted(connectedNow: false),
            .read(characteristic: UUIDs.batteryLevel),
            .subscribe(characteristic: UUIDs.heartRateMeasurement, via: .startNotify),
            h.scheduled(.subscribe, after: .seconds(15)),
        ])
        #expect(h.machine.servicesSeen == DeviceHarness.strapServices)
    }

    @Test func servicesAlreadySeenAreNotPersistedAgain() throws {
        var h = try DeviceHarness.ready()
        _ = h.feed(.disconnected(Failures.remoteReason))
        _ = try h.fire(.backoff)
        _ = h.feed(.attemptGranted(adapter: hci0))
        _ = h.feed(.connected)
        let effects = h.feed(.servicesResolved(services: DeviceHarness.strapServices, characteristics: DeviceHarness.strapCharacteristics))
        #expect(!effects.contains { if case .persist = $0 { true } else { false } })
    }

    @Test func theLastSetupStepMakesTheDeviceReadyAndRecordsTheConnection() throws {
        var h = try DeviceHarness.settingUp()
        #expect(h.feed(.valueReceived(characteristic: UUIDs.batteryLevel)) == [])
        let effects = h.feed(.notificationsEnabled(characteristic: UUIDs.heartRateMeasurement))
        #expect(effects == [
            .cancelTimer(.subscribe), h.persisted(connectedNow: true),
            h.changed(from: .discovering, to: .ready),
        ])
        #expect(h.machine.hasBeenReady)
    }

    @Test func aDeviceWithNothingToReadOrSubscribeIsReadyOnceServicesResolve() throws {
        let config = DeviceStateMachine.Configuration(requiredServices: [UUIDs.heartRateService])
        var h = try DeviceHarness.discovering(configuration: config)
        let effects = h.feed(.servicesResolved(services: [UUIDs.heartRateService], characteristics: []))
        #expect(effects == [
            .cancelTimer(.discovery), h.persisted(connectedNow: true),
            h.changed(from: .discovering, to: .ready),
        ])
    }

    @Test func theFileDescriptorPathSubscribesWithAcquireNotify() throws {
        var config = DeviceHarness.strap
        config.useFileDescriptorPath = true
        var h = try DeviceHarness.discovering(configuration: config)
        let effects = h.feed(.servicesResolved(services: DeviceHarness.strapServices, characteristics: DeviceHarness.strapCharacteristics))
        #expect(effects.contains(.subscribe(characteristic: UUIDs.heartRateMeasurement, via: .acquireNotify)))
    }

    @Test func anUnsolicitedLinkOfAWantedDeviceIsAdopted() throws {
        var h = try DeviceHarness.awaitingGrant()
        // E.g. the link survived a daemon restart: no need to tear it down and reconnect.
        let effects = h.feed(.connected)
        #expect(effects == [
            .withdrawAttemptRequest, .awaitServices, h.scheduled(.discovery, after: .seconds(30)),
            h.changed(from: .connecting(adapter: nil), to: .discovering),
        ])
        #expect(h.machine.session == 1)
    }

    @Test func anUnsolicitedLinkOfAnUnwantedDeviceIsDisconnected() throws {
        var h = try DeviceHarness.idle()
        #expect(h.feed(.connected) == [.disconnect])
        #expect(h.state == .idle)
    }

    @Test func anUnsolicitedLinkWhileBackingOffCancelsTheBackoff() throws {
        var h = try DeviceHarness.connecting()
        _ = h.feed(.connectFailed(Failures.abortByRemote))
        let backingOff = h.state
        let effects = h.feed(.connected)
        #expect(effects == [
            .cancelTimer(.backoff), .awaitServices, h.scheduled(.discovery, after: .seconds(30)),
            h.changed(from: backingOff, to: .discovering),
        ])
    }
}
