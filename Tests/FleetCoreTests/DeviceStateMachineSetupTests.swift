import Testing
@testable import FleetCore

/// Setup after services resolve, and the `degraded` state it can end in.
@Suite struct DeviceStateMachineSetupTests {
    static let twoSubscriptions = DeviceStateMachine.Configuration(
        requiredServices: [UUIDs.heartRateService],
        subscriptions: [UUIDs.heartRateMeasurement, UUIDs.temperature]
    )

    @Test func aFailedSubscriptionLeavesTheDeviceDegradedAndRetriesLater() throws {
        var h = try DeviceHarness.settingUp()
        _ = h.feed(.valueReceived(characteristic: UUIDs.batteryLevel))
        let effects = h.feed(.subscribeFailed(characteristic: UUIDs.heartRateMeasurement, Failures.notSupported))
        let degraded = DeviceState.degraded(.subscriptionsIncomplete(missing: [UUIDs.heartRateMeasurement]))
        #expect(effects == [
            .emit(.setupProblem(characteristic: UUIDs.heartRateMeasurement, error: Failures.notSupported, session: 1)),
            .cancelTimer(.subscribe), h.persisted(connectedNow: true),
            h.scheduled(.recovery, after: .seconds(30)),
            h.changed(from: .discovering, to: degraded),
        ])
    }

    @Test func aSubscriptionThatNeverAnswersLeavesTheDeviceDegraded() throws {
        var h = try DeviceHarness.settingUp(configuration: Self.twoSubscriptions)
        _ = h.feed(.notificationsEnabled(characteristic: UUIDs.heartRateMeasurement))
        let effects = try h.fire(.subscribe)
        #expect(effects == [
            .emit(.setupProblem(characteristic: UUIDs.temperature, error: nil, session: 1)),
            h.persisted(connectedNow: true), h.scheduled(.recovery, after: .seconds(30)),
            h.changed(from: .discovering, to: .degraded(.subscriptionsIncomplete(missing: [UUIDs.temperature]))),
        ])
    }

    @Test func aDegradedDeviceResubscribesWhatIsMissingOnTheRecoveryTimer() throws {
        var h = try DeviceHarness.settingUp(configuration: Self.twoSubscriptions)
        _ = try h.fire(.subscribe)
        let effects = try h.fire(.recovery)
        #expect(effects == [
            .subscribe(characteristic: UUIDs.heartRateMeasurement, via: .startNotify),
            .subscribe(characteristic: UUIDs.temperature, via: .startNotify),
            h.scheduled(.recovery, after: .seconds(30)),
        ])
    }

    @Test func theLastMissingSubscriptionRestoresReady() throws {
        var h = try DeviceHarness.settingUp(configuration: Self.twoSubscriptions)
        _ = try h.fire(.subscribe)
        let partly = h.feed(.notificationsEnabled(characteristic: UUIDs.heartRateMeasurement))
        #expect(partly == [h.changed(
            from: .degraded(.subscriptionsIncomplete(missing: [UUIDs.heartRateMeasurement, UUIDs.temperature])),
            to: .degraded(.subscriptionsIncomplete(missing: [UUIDs.temperature]))
        )])
        let effects = h.feed(.notificationsEnabled(characteristic: UUIDs.temperature))
        #expect(effects == [
            .cancelTimer(.recovery),
            h.changed(from: .degraded(.subscriptionsIncomplete(missing: [UUIDs.temperature])), to: .ready),
        ])
    }

    @Test func aFailedReadOnConnectIsReportedButNotFatal() throws {
        var h = try DeviceHarness.settingUp()
        let failure = DeviceEvent.Failure(name: "org.bluez.Error.NotPermitted", message: "Read not permitted")
        let effects = h.feed(.readFailed(characteristic: UUIDs.batteryLevel, failure))
        #expect(effects == [.emit(.setupProblem(characteristic: UUIDs.batteryLevel, error: failure, session: 1))])
        _ = h.feed(.notificationsEnabled(characteristic: UUIDs.heartRateMeasurement))
        #expect(h.state == .ready)
    }

    @Test func reachingReadyClosesTheBreakerAndEndsTheProtocolStreak() throws {
        var h = try DeviceHarness.discovering()
        _ = h.feed(.servicesResolved(services: [], characteristics: []))
        _ = try h.fire(.backoff)
        _ = h.feed(.attemptGranted(adapter: DeviceHarness.hci0))
        _ = h.feed(.connected)
        #expect(h.machine.reconnect.protocolStreak == 1)
        _ = h.feed(.servicesResolved(services: DeviceHarness.strapServices, characteristics: DeviceHarness.strapCharacteristics))
        _ = h.feed(.valueReceived(characteristic: UUIDs.batteryLevel))
        _ = h.feed(.notificationsEnabled(characteristic: UUIDs.heartRateMeasurement))
        #expect(h.machine.reconnect.protocolStreak == 0)
        #expect(h.machine.reconnect.breaker == .closed)
    }
}
