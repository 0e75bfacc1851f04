import Testing
import FleetCore

/// Stories of one or two evaluations each: build a fleet, evaluate, check the exact decision.
@Suite struct PoolPolicyTests {
    typealias F = PoolFixture
    let hci0 = F.adapter(0)
    let hci1 = F.adapter(1)

    func policy(
        maxConnections: Int = 10,
        slots: Int = 5,
        dwell: Duration = .seconds(60),
        margin: Double = 10,
        limit: AttemptRateLimit = AttemptRateLimit(burst: 10, refillInterval: .seconds(1))
    ) -> PoolPolicy {
        PoolPolicy(
            configuration: PoolConfiguration(
                maxConnections: maxConnections, defaultSlotsPerAdapter: slots, minimumDwell: dwell,
                scoreMargin: margin, weights: PoolScoreWeights(priority: 10, rssi: 1, recentFailures: 5),
                attemptRateLimit: limit
            ),
            now: .zero
        )
    }

    func pinned(_ n: Int, rssi: [AdapterID: Int], link: PoolLinkStatus = .disconnected, wants: Bool = true) -> PoolDeviceSnapshot {
        PoolDeviceSnapshot(id: F.device(n), membership: .pinned, rssi: rssi, link: link, wantsAttempt: wants)
    }

    func pooled(_ n: Int, priority: Int = 0, rssi: [AdapterID: Int], link: PoolLinkStatus = .disconnected, wants: Bool = true) -> PoolDeviceSnapshot {
        PoolDeviceSnapshot(id: F.device(n), membership: .pool, configuredPriority: priority, rssi: rssi, link: link, wantsAttempt: wants)
    }

    // MARK: - Placement

    @Test func placesADeviceOnTheAdapterThatSeesItBest() {
        var policy = policy()
        let plan = policy.evaluate(devices: [pinned(1, rssi: [hci0: -80, hci1: -50])], adapters: F.adapters(2), conditions: .running, now: .zero)
        #expect(plan.placements[F.device(1)] == hci1)
    }

    @Test func aReachablePinnedDeviceEvictsTheLowestRankedPoolDevice() {
        var policy = policy(slots: 2)
        let devices = [
            pooled(1, priority: 5, rssi: [hci0: -60], link: .connected(hci0, since: .zero), wants: false),
            pooled(2, priority: 1, rssi: [hci0: -60], link: .connected(hci0, since: .zero), wants: false),
            pinned(3, rssi: [hci0: -70]),
        ]
        let plan = policy.evaluate(devices: devices, adapters: F.adapters(1), conditions: .running, now: .zero)
        #expect(plan.placements[F.device(3)] == hci0)
        #expect(plan.evictions == [PoolEviction(device: F.device(2), adapter: hci0, reason: .makeRoomForPinned)])
    }

    @Test func aPinnedDeviceTakesAFreeSlotElsewhereRatherThanEvict() {
        var policy = policy(slots: 1)
        let devices = [
            pooled(1, rssi: [hci0: -40], link: .connected(hci0, since: .zero), wants: false),
            pinned(2, rssi: [hci0: -40, hci1: -90]),
        ]
        let plan = policy.evaluate(devices: devices, adapters: F.adapters(2), conditions: .running, now: .zero)
        #expect(plan.placements[F.device(2)] == hci1)
        #expect(plan.evictions.isEmpty)
    }

    @Test func maxConnectionsLimitsThePoolButNeverRefusesPinnedDevices() {
        var policy = policy(maxConnections: 2)
        let devices = [
            pinned(1, rssi: [hci0: -50]), pinned(2, rssi: [hci0: -50]), pinned(3, rssi: [hci0: -50]),
            pooled(4, priority: 100, rssi: [hci0: -30]),
        ]
        let plan = policy.evaluate(devices: devices, adapters: F.adapters(1), conditions: .running, now: .zero)
        #expect(Set(plan.placements.keys) == [F.device(1), F.device(2), F.device(3)])
        #expect(plan.suppressed[F.device(4)] == .notSelected)
    }

    @Test func aDeviceKnownToBlueZIsReachableWithoutAnRSSIReading() {
        var policy = policy()
        let device = PoolDeviceSnapshot(id: F.device(1), membership: .pinned, knownConnectable: [hci1], wantsAttempt: true)
        let plan = policy.evaluate(devices: [device], adapters: F.adapters(2), conditions: .running, now: .zero)
        #expect(plan.grants == [AttemptGrant(device: F.device(1), adapter: hci1)])
    }

    @Test func anIneligibleConnectedDeviceIsEvicted() {
        var policy = policy()
        var device = pooled(1, rssi: [hci0: -50], link: .connected(hci0, since: .zero), wants: false)
        device.isEligible = false
        let plan = policy.evaluate(devices: [device], adapters: F.adapters(1), conditions: .running, now: .zero)
        #expect(plan.evictions == [PoolEviction(device: F.device(1), adapter: hci0, reason: .notEligible)])
    }

    @Test func movesAPinnedDeviceToAnotherAdapterToMakeRoomForOneWithFewerChoices() {
        var policy = policy(slots: 1)
        let devices = [
            pinned(1, rssi: [hci0: -40, hci1: -60], wants: false),  // placed first: best signal
            pinned(2, rssi: [hci0: -50], wants: false),  // only hci0 reaches it
        ]
        let plan = policy.evaluate(devices: devices, adapters: F.adapters(2), conditions: .running, now: .zero)
        #expect(plan.placements == [F.device(1): hci1, F.device(2): hci0])
    }

    @Test func aPoolDeviceDisplacedByAPinnedOneIsPlacedOnAnotherAdapterInTheSamePlan() {
        var policy = policy(slots: 1)
        let devices = [
            pooled(1, rssi: [hci0: -40, hci1: -60], link: .connected(hci0, since: .zero), wants: false),
            pinned(2, rssi: [hci0: -50], wants: false),
        ]
        let plan = policy.evaluate(devices: devices, adapters: F.adapters(2), conditions: .running, now: .zero)
        #expect(plan.evictions == [PoolEviction(device: F.device(1), adapter: hci0, reason: .makeRoomForPinned)])
        #expect(plan.placements[F.device(1)] == hci1)
    }

    @Test func aPlacedDeviceKeepsItsAdapterUntilItConnectsEvenIfABetterOneFreesUp() {
        var policy = policy(slots: 1)
        let blocker = pinned(1, rssi: [hci0: -50], link: .connected(hci0, since: .zero), wants: false)
        let candidate = pooled(2, rssi: [hci0: -40, hci1: -70], wants: false)
        let first = policy.evaluate(devices: [blocker, candidate], adapters: F.adapters(2), conditions: .running, now: .zero)
        #expect(first.placements[F.device(2)] == hci1)
        // hci0 frees up; a fresh evaluation would pick it, but the plan does not move device 2.
        let second = policy.evaluate(devices: [candidate], adapters: F.adapters(2), conditions: .running, now: .zero)
        #expect(second.placements[F.device(2)] == hci1)
    }

    @Test func equalCandidatesAreChosenByDeviceID() {
        var policy = policy(maxConnections: 1)
        let plan = policy.evaluate(
            devices: [pooled(2, rssi: [hci0: -50]), pooled(1, rssi: [hci0: -50])],
            adapters: F.adapters(1), conditions: .running, now: .zero
        )
        #expect(Set(plan.placements.keys) == [F.device(1)])
    }

    // MARK: - Hysteresis

    @Test func aConnectedPoolDeviceKeepsItsSlotWithinTheDwellTime() {
        var policy = policy(maxConnections: 1, dwell: .seconds(60))
        let devices = [
            pooled(1, priority: 0, rssi: [hci0: -90], link: .connected(hci0, since: .zero), wants: false),
            pooled(2, priority: 50, rssi: [hci0: -30]),
        ]
        let plan = policy.evaluate(devices: devices, adapters: F.adapters(1), conditions: .running, now: F.instant(seconds: 59))
        #expect(plan.placements[F.device(1)] == hci0)
        #expect(plan.evictions.isEmpty)
    }

    @Test func aConnectedPoolDeviceKeepsItsSlotAgainstAChallengerWithinTheMargin() {
        var policy = policy(maxConnections: 1, margin: 10)
        let devices = [
            pooled(1, rssi: [hci0: -60], link: .connected(hci0, since: .zero), wants: false),
            pooled(2, rssi: [hci0: -50]),  // better by exactly the margin: not enough
        ]
        let plan = policy.evaluate(devices: devices, adapters: F.adapters(1), conditions: .running, now: F.instant(seconds: 3600))
        #expect(plan.placements[F.device(1)] == hci0)
        #expect(plan.evictions.isEmpty)
    }

    @Test func aChallengerBeyondTheMarginReplacesADeviceThatHasDwelt() {
        var policy = policy(maxConnections: 1, margin: 10)
        let devices = [
            pooled(1, rssi: [hci0: -60], link: .connected(hci0, since: .zero), wants: false),
            pooled(2, rssi: [hci0: -49]),
        ]
        let plan = policy.evaluate(devices: devices, adapters: F.adapters(1), conditions: .running, now: F.instant(seconds: 60))
        #expect(plan.placements[F.device(2)] == hci0)
        #expect(plan.evictions == [PoolEviction(device: F.device(1), adapter: hci0, reason: .outranked)])
    }

    // MARK: - Attempt gating

    @Test func grantsOneAttemptPerAdapterAtATime() {
        var policy = policy()
        let plan = policy.evaluate(
            devices: [pinned(1, rssi: [hci0: -50]), pinned(2, rssi: [hci0: -60])],
            adapters: F.adapters(1), conditions: .running, now: .zero
        )
        #expect(plan.grants == [AttemptGrant(device: F.device(1), adapter: hci0)])
        #expect(plan.suppressed[F.device(2)] == .adapterBusy(hci0))
    }

    @Test func grantsOnEveryIdleAdapterInOneEvaluation() {
        var policy = policy()
        let plan = policy.evaluate(
            devices: [pinned(1, rssi: [hci0: -50]), pinned(2, rssi: [hci1: -50])],
            adapters: F.adapters(2), conditions: .running, now: .zero
        )
        #expect(Set(plan.grants.map(\.adapter)) == [hci0, hci1])
    }

    @Test func remembersAGrantUntilTheAttemptIsReportedFinished() {
        var policy = policy()
        let devices = [pinned(1, rssi: [hci0: -50]), pinned(2, rssi: [hci0: -60])]
        _ = policy.evaluate(devices: devices, adapters: F.adapters(1), conditions: .running, now: .zero)
        // The snapshots still say "disconnected": the gate must not grant device 2 on the busy adapter.
        let again = policy.evaluate(devices: devices, adapters: F.adapters(1), conditions: .running, now: .zero)
        #expect(again.grants.isEmpty)
        policy.attemptFinished(device: F.device(1))
        let after = policy.evaluate(devices: [pinned(1, rssi: [hci0: -50], wants: false), devices[1]], adapters: F.adapters(1), conditions: .running, now: .zero)
        #expect(after.grants == [AttemptGrant(device: F.device(2), adapter: hci0)])
    }

    @Test func holdsBackAttemptsWhenTheTokenBucketIsEmptyAndSaysWhenToComeBack() {
        var policy = policy(limit: AttemptRateLimit(burst: 1, refillInterval: .milliseconds(500)))
        let plan = policy.evaluate(
            devices: [pinned(1, rssi: [hci0: -50]), pinned(2, rssi: [hci1: -50])],
            adapters: F.adapters(2), conditions: .running, now: .zero
        )
        #expect(plan.grants.count == 1)
        #expect(plan.suppressed[F.device(2)] == .rateLimited)
        #expect(plan.nextGrantInstant == F.instant(milliseconds: 500))
    }

    @Test func givesAScarceTokenToTheAdapterWithTheMostDevicesWaiting() {
        var policy = policy(limit: AttemptRateLimit(burst: 1, refillInterval: .seconds(1)))
        let devices = [
            pinned(1, rssi: [hci1: -30]),  // placed first, but alone on its adapter
            pinned(2, rssi: [hci0: -50]),
            pinned(3, rssi: [hci0: -60]),
        ]
        let plan = policy.evaluate(devices: devices, adapters: F.adapters(2), conditions: .running, now: .zero)
        #expect(plan.grants == [AttemptGrant(device: F.device(2), adapter: hci0)])
    }

    @Test func doesNotGrantIntoASlotStillHeldByAnEvictedDevice() {
        var policy = policy(slots: 1)
        let devices = [
            pooled(1, rssi: [hci0: -50], link: .connected(hci0, since: .zero), wants: false),
            pinned(2, rssi: [hci0: -50]),
        ]
        let plan = policy.evaluate(devices: devices, adapters: F.adapters(1), conditions: .running, now: .zero)
        #expect(plan.evictions.map(\.device) == [F.device(1)])
        #expect(plan.suppressed[F.device(2)] == .slotsHeld(hci0))
    }

    @Test func aPoolDeviceIsNotGrantedBeyondMaxConnectionsWhileAnEvictionIsPending() {
        var policy = policy(maxConnections: 1, dwell: .zero, margin: 0)
        let devices = [
            pooled(1, rssi: [hci0: -90], link: .connected(hci0, since: .zero), wants: false),
            pooled(2, rssi: [hci1: -30]),
        ]
        let plan = policy.evaluate(devices: devices, adapters: F.adapters(2), conditions: .running, now: .zero)
        #expect(plan.placements[F.device(2)] == hci1)
        #expect(plan.suppressed[F.device(2)] == .maxConnections)
    }

    // MARK: - Suppression

    @Test func grantsNothingWhileTheEngineIsStopped() {
        var policy = policy()
        let plan = policy.evaluate(
            devices: [pinned(1, rssi: [hci0: -50])], adapters: F.adapters(1),
            conditions: PoolCentralConditions(bluetoothdPresent: true, engineRunning: false), now: .zero
        )
        #expect(plan.grants.isEmpty)
        #expect(plan.suppressed[F.device(1)] == .engineStopped)
    }

    @Test func grantsNothingWhileBluetoothdIsGone() {
        var policy = policy()
        let plan = policy.evaluate(
            devices: [pinned(1, rssi: [hci0: -50])], adapters: F.adapters(1),
            conditions: PoolCentralConditions(bluetoothdPresent: false, engineRunning: true), now: .zero
        )
        #expect(plan.grants.isEmpty)
        #expect(plan.suppressed[F.device(1)] == .bluetoothdGone)
    }

    @Test func grantsNothingOnAnAdapterThatIsOff() {
        var policy = policy()
        let plan = policy.evaluate(devices: [pinned(1, rssi: [hci0: -50])], adapters: F.adapters(1, powered: false), conditions: .running, now: .zero)
        #expect(plan.grants.isEmpty)
        #expect(plan.suppressed[F.device(1)] == .adapterOff)
    }

    @Test func grantsNothingToAnIneligibleDevice() {
        var policy = policy()
        var device = pinned(1, rssi: [hci0: -50])
        device.isEligible = false
        let plan = policy.evaluate(devices: [device], adapters: F.adapters(1), conditions: .running, now: .zero)
        #expect(plan.suppressed[F.device(1)] == .notEligible)
    }

    @Test func grantsNothingWhileARestoreIsInProgressForTheDevice() {
        var policy = policy()
        var device = pinned(1, rssi: [hci0: -50])
        device.restoreInProgress = true
        let plan = policy.evaluate(devices: [device], adapters: F.adapters(1), conditions: .running, now: .zero)
        #expect(plan.grants.isEmpty)
        #expect(plan.suppressed[F.device(1)] == .restoreInProgress)
    }

    @Test func grantsNothingToADeviceNoAdapterReaches() {
        var policy = policy()
        let plan = policy.evaluate(devices: [pinned(1, rssi: [:])], adapters: F.adapters(1), conditions: .running, now: .zero)
        #expect(plan.suppressed[F.device(1)] == .unreachable)
    }

    @Test func grantsNothingToADeviceWhoseBackoffHasNotElapsed() {
        var policy = policy()
        let plan = policy.evaluate(devices: [pinned(1, rssi: [hci0: -50], wants: false)], adapters: F.adapters(1), conditions: .running, now: .zero)
        #expect(plan.grants.isEmpty)
        #expect(plan.placements[F.device(1)] == hci0)
    }
}
