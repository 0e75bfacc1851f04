import Testing
@testable import FleetCore

@Suite struct ReconnectControllerTests {
    /// No jitter, so delays are exact.
    static let exact = ReconnectPolicy(jitterFraction: 0)

    func delay(of decision: ReconnectDecision, from now: MonotonicInstant) -> Duration? {
        guard case .retry(let at, _, _) = decision else { return nil }
        return at.duration(since: now)
    }

    @Test func delaysDoubleFromTheBaseUntilTheCap() {
        var random = SeededRandom(seed: 3)
        var controller = ReconnectController(policy: Self.exact)
        var delays: [Duration] = []
        for _ in 1...8 {
            if let delay = delay(of: controller.recordFailure(.transient, now: .zero, random: &random), from: .zero) {
                delays.append(delay)
            }
        }
        #expect(delays == [1, 2, 4, 8, 16, 32, 60, 60].map { Duration.seconds($0) })
    }

    @Test func jitterTakesAtMostTheFractionOffTheNominalDelay() {
        var random = SeededRandom(seed: 3)
        var controller = ReconnectController()
        for attempt in 1...40 {
            let decision = controller.recordFailure(.outOfSlots, now: .zero, random: &random)
            let nominal = min(Duration.seconds(1) * (1 << min(attempt - 1, 10)), .seconds(60))
            let delay = delay(of: decision, from: .zero) ?? .zero
            #expect(delay <= nominal && delay >= max(nominal / 2, .seconds(1)), "attempt \(attempt): \(delay)")
        }
    }

    @Test func retriesCountConsecutiveFailures() {
        var random = SeededRandom(seed: 3)
        var controller = ReconnectController()
        _ = controller.recordFailure(.transient, now: .zero, random: &random)
        let decision = controller.recordFailure(.busy, now: .zero, random: &random)
        guard case .retry(_, let attempt, _) = decision else { Issue.record("expected a retry"); return }
        #expect(attempt == 2)
    }

    @Test func theFirstTransientLossOfAReadyLinkRetriesFast() {
        var random = SeededRandom(seed: 3)
        var controller = ReconnectController()
        controller.recordReady(now: .zero)
        let now = MonotonicInstant.zero + .seconds(300)
        let decision = controller.recordFailure(.transient, now: now, random: &random)
        #expect(decision == .retry(at: now + .milliseconds(250), attempt: 1, rediscover: false))
    }

    @Test func aTransientFailureOfANeverReadyDeviceIsNotFast() {
        var random = SeededRandom(seed: 3)
        var controller = ReconnectController()
        let decision = controller.recordFailure(.transient, now: .zero, random: &random)
        #expect(decision == .retry(at: .zero + .seconds(1), attempt: 1, rediscover: false))
    }

    @Test func aNonTransientLossOfAReadyLinkIsNotFast() {
        var random = SeededRandom(seed: 3)
        var controller = ReconnectController()
        controller.recordReady(now: .zero)
        let now = MonotonicInstant.zero + .seconds(300)
        let decision = controller.recordFailure(.unknown, now: now, random: &random)
        #expect(decision == .retry(at: now + .seconds(1), attempt: 1, rediscover: false))
    }

    @Test func aFlappingLinkKeepsBackingOff() {
        var random = SeededRandom(seed: 3)
        var controller = ReconnectController(policy: Self.exact)
        controller.recordReady(now: .zero)
        _ = controller.recordFailure(.transient, now: .zero + .seconds(120), random: &random)
        // Ready again, but only for 5 s: that is not stable, so no second fast retry.
        controller.recordReady(now: .zero + .seconds(121))
        let now = MonotonicInstant.zero + .seconds(126)
        let decision = controller.recordFailure(.transient, now: now, random: &random)
        #expect(decision == .retry(at: now + .seconds(2), attempt: 2, rediscover: false))
    }

    @Test func aStableConnectionForgetsEarlierFailures() {
        var random = SeededRandom(seed: 3)
        var controller = ReconnectController()
        for _ in 1...5 { _ = controller.recordFailure(.transient, now: .zero, random: &random) }
        controller.recordReady(now: .zero)
        _ = controller.recordFailure(.transient, now: .zero + .seconds(60), random: &random)
        #expect(controller.consecutiveFailures == 1)
        #expect(controller.failuresByClass == [.transient: 1])
    }

    @Test func goneAsksToRediscoverFirst() {
        var random = SeededRandom(seed: 3)
        var controller = ReconnectController()
        let decision = controller.recordFailure(.gone, now: .zero, random: &random)
        #expect(decision == .retry(at: .zero + .seconds(1), attempt: 1, rediscover: true))
    }

    @Test func outOfSlotsNeverRunsOutOfBudget() {
        var random = SeededRandom(seed: 3)
        var controller = ReconnectController()
        for _ in 1...500 {
            guard case .retry = controller.recordFailure(.outOfSlots, now: .zero, random: &random) else {
                Issue.record("outOfSlots stopped retrying")
                return
            }
        }
    }

    @Test func anExhaustedBudgetSuspendsForTheCooldown() {
        var random = SeededRandom(seed: 3)
        var controller = ReconnectController(policy: ReconnectPolicy(budgets: [.unknown: 2]))
        _ = controller.recordFailure(.unknown, now: .zero, random: &random)
        _ = controller.recordFailure(.unknown, now: .zero, random: &random)
        let decision = controller.recordFailure(.unknown, now: .zero, random: &random)
        #expect(decision == .suspend(until: .zero + .seconds(300), reason: .budgetExhausted(.unknown)))
    }

    @Test func theBudgetIsRefilledAfterASuspension() {
        var random = SeededRandom(seed: 3)
        var controller = ReconnectController(policy: ReconnectPolicy(budgets: [.unknown: 1]))
        _ = controller.recordFailure(.unknown, now: .zero, random: &random)
        _ = controller.recordFailure(.unknown, now: .zero, random: &random)
        guard case .retry = controller.recordFailure(.unknown, now: .zero + .seconds(300), random: &random) else {
            Issue.record("expected a retry after the cooldown")
            return
        }
    }

    @Test func budgetsAreCountedPerClass() {
        var random = SeededRandom(seed: 3)
        var controller = ReconnectController(policy: ReconnectPolicy(budgets: [.unknown: 1, .busy: 1]))
        _ = controller.recordFailure(.unknown, now: .zero, random: &random)
        guard case .retry = controller.recordFailure(.busy, now: .zero, random: &random) else {
            Issue.record("one class's failures spent another's budget")
            return
        }
    }

    @Test func deniedGivesUpOnceItsBudgetIsSpent() {
        var random = SeededRandom(seed: 3)
        var controller = ReconnectController()
        _ = controller.recordFailure(.denied, now: .zero, random: &random)
        _ = controller.recordFailure(.denied, now: .zero, random: &random)
        let decision = controller.recordFailure(.denied, now: .zero, random: &random)
        #expect(decision == .giveUp(.denied))
    }

    @Test func protocolFailuresBelowTheThresholdBackOff() {
        var random = SeededRandom(seed: 3)
        var controller = ReconnectController()
        _ = controller.recordFailure(.protocol, now: .zero, random: &random)
        guard case .retry = controller.recordFailure(.protocol, now: .zero, random: &random) else {
            Issue.record("expected a retry")
            return
        }
        #expect(controller.breaker == .closed)
    }

    @Test func theThresholdProtocolFailureOpensTheBreaker() {
        var random = SeededRandom(seed: 3)
        var controller = ReconnectController()
        for _ in 1...2 { _ = controller.recordFailure(.protocol, now: .zero, random: &random) }
        let now = MonotonicInstant.zero + .seconds(5)
        let decision = controller.recordFailure(.protocol, now: now, random: &random)
        #expect(decision == .suspend(until: now + .seconds(60), reason: .circuitOpen))
        #expect(controller.breaker == .open(until: now + .seconds(60)))
    }

    @Test func otherFailuresBetweenProtocolFailuresDoNotResetTheStreak() {
        var random = SeededRandom(seed: 3)
        var controller = ReconnectController()
        _ = controller.recordFailure(.protocol, now: .zero, random: &random)
        _ = controller.recordFailure(.transient, now: .zero, random: &random)
        _ = controller.recordFailure(.protocol, now: .zero, random: &random)
        let decision = controller.recordFailure(.protocol, now: .zero, random: &random)
        #expect(decision == .suspend(until: .zero + .seconds(60), reason: .circuitOpen))
    }

    @Test func anOpenBreakerForbidsAttemptsUntilItsCooldownEnds() {
        var random = SeededRandom(seed: 3)
        var controller = ReconnectController()
        for _ in 1...3 { _ = controller.recordFailure(.protocol, now: .zero, random: &random) }
        #expect(!controller.mayAttempt(now: .zero + .seconds(59)))
        let probing = controller.beginProbe(now: .zero + .seconds(59))
        #expect(!probing)
        #expect(controller.mayAttempt(now: .zero + .seconds(60)))
    }

    @Test func aProbeThatReachesReadyClosesTheBreaker() {
        var random = SeededRandom(seed: 3)
        var controller = ReconnectController()
        for _ in 1...3 { _ = controller.recordFailure(.protocol, now: .zero, random: &random) }
        controller.beginProbe(now: .zero + .seconds(60))
        controller.recordReady(now: .zero + .seconds(61))
        #expect(controller.breaker == .closed)
        #expect(controller.protocolStreak == 0)
    }

    @Test func aProbeThatFailsTheSameWayReopensForLonger() {
        var random = SeededRandom(seed: 3)
        var controller = ReconnectController()
        for _ in 1...3 { _ = controller.recordFailure(.protocol, now: .zero, random: &random) }
        let now = MonotonicInstant.zero + .seconds(60)
        controller.beginProbe(now: now)
        let decision = controller.recordFailure(.protocol, now: now, random: &random)
        #expect(decision == .suspend(until: now + .seconds(120), reason: .circuitOpen))
    }

    @Test func theBreakerCooldownStopsGrowingAtItsMaximum() {
        var random = SeededRandom(seed: 3)
        var controller = ReconnectController(policy: ReconnectPolicy(breakerMaxCooldown: .seconds(200)))
        for _ in 1...3 { _ = controller.recordFailure(.protocol, now: .zero, random: &random) }
        var now = MonotonicInstant.zero
        var last: ReconnectDecision?
        for _ in 1...5 {
            now = now + .seconds(3600)
            controller.beginProbe(now: now)
            last = controller.recordFailure(.protocol, now: now, random: &random)
        }
        #expect(last == .suspend(until: now + .seconds(200), reason: .circuitOpen))
    }

    @Test func aProbeThatFailsForAnotherReasonStaysHalfOpen() {
        var random = SeededRandom(seed: 3)
        var controller = ReconnectController()
        for _ in 1...3 { _ = controller.recordFailure(.protocol, now: .zero, random: &random) }
        controller.beginProbe(now: .zero + .seconds(60))
        _ = controller.recordFailure(.transient, now: .zero + .seconds(61), random: &random)
        #expect(controller.breaker == .halfOpen)
    }

    @Test func resetForgetsEverything() {
        var random = SeededRandom(seed: 3)
        var controller = ReconnectController()
        for _ in 1...3 { _ = controller.recordFailure(.protocol, now: .zero, random: &random) }
        controller.reset()
        #expect(controller == ReconnectController())
    }

    @Test func inconsistentPolicyValuesAreClamped() {
        let policy = ReconnectPolicy(baseDelay: .seconds(5), maxDelay: .seconds(1), multiplier: 0.5, jitterFraction: 3, breakerThreshold: 0)
        #expect(policy.maxDelay == .seconds(5))
        #expect(policy.multiplier == 1)
        #expect(policy.jitterFraction == 1)
        #expect(policy.breakerThreshold == 1)
    }

    @Test func aNonProtocolFailureWhileTheBreakerIsOpenWaitsOutTheCooldown() {
        var random = SeededRandom(seed: 3)
        var controller = ReconnectController()
        for _ in 1...3 { _ = controller.recordFailure(.protocol, now: .zero, random: &random) }
        let decision = controller.recordFailure(.transient, now: .zero + .seconds(10), random: &random)
        #expect(decision == .suspend(until: .zero + .seconds(60), reason: .circuitOpen))
    }
}
