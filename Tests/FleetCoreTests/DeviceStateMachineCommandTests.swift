import Testing
@testable import FleetCore

/// What commands ask of one device: reconnect now, subscriptions changed at run time.
@Suite struct DeviceStateMachineCommandTests {
    let hci0 = DeviceHarness.hci0

    @Test func reconnectCutsABackoffShortAndForgetsTheFailures() throws {
        var h = try DeviceHarness.connecting()
        _ = h.feed(.connectFailed(Failures.abortByRemote))
        guard case .backingOff = h.state else {
            Issue.record("a failed connect backs off, got \(h.state)")
            return
        }
        let before = h.state
        let effects = h.feed(.reconnectRequested)
        #expect(effects == [.cancelTimer(.backoff), .requestAttempt, h.changed(from: before, to: .connecting(adapter: nil))])
        #expect(h.machine.reconnect.consecutiveFailures == 0)
    }

    @Test func reconnectRevivesADeviceThatGaveUp() throws {
        var h = try DeviceHarness.connecting(policy: ReconnectPolicy(budgets: [.denied: 0]))
        _ = h.feed(.connectFailed(Failures.notAuthorized))
        #expect(h.state == .suspended(.gaveUp(.denied)))
        let effects = h.feed(.reconnectRequested)
        #expect(effects == [.requestAttempt, h.changed(from: .suspended(.gaveUp(.denied)), to: .connecting(adapter: nil))])
    }

    @Test func reconnectLeavesALinkedDeviceAlone() throws {
        var h = try DeviceHarness.ready()
        #expect(h.feed(.reconnectRequested) == [])
        #expect(h.state == .ready)
    }

    @Test func aSubscriptionAddedOnAReadyLinkIsMissingUntilEnabled() throws {
        var h = try DeviceHarness.ready()
        let effects = h.feed(.subscriptionAdded(characteristic: UUIDs.temperature))
        #expect(effects.contains(.subscribe(characteristic: UUIDs.temperature, via: .startNotify)))
        #expect(h.state == .degraded(.subscriptionsIncomplete(missing: [UUIDs.temperature])))
        _ = h.feed(.notificationsEnabled(characteristic: UUIDs.temperature))
        #expect(h.state == .ready)
        #expect(h.machine.configuration.subscriptions.contains(UUIDs.temperature), "the next link subscribes too")
    }

    @Test func aSubscriptionAddedBeforeTheLinkWaitsForTheSetup() throws {
        var h = try DeviceHarness.awaitingGrant()
        #expect(h.feed(.subscriptionAdded(characteristic: UUIDs.temperature)) == [])
        #expect(h.machine.configuration.subscriptions == [UUIDs.heartRateMeasurement, UUIDs.temperature])
    }

    @Test func aSubscriptionRemovedOnALinkIsStoppedThere() throws {
        var h = try DeviceHarness.ready()
        let effects = h.feed(.subscriptionRemoved(characteristic: UUIDs.heartRateMeasurement))
        #expect(effects == [.unsubscribe(characteristic: UUIDs.heartRateMeasurement, via: .startNotify)])
        #expect(h.machine.configuration.subscriptions.isEmpty)
        #expect(h.feed(.subscriptionRemoved(characteristic: UUIDs.heartRateMeasurement)) == [], "removing it twice does nothing")
    }
}
