import PropertyBased
import Testing
@testable import FleetCore

@Suite struct ReconnectControllerPropertyTests {
    static func policy(baseMilliseconds: Int, capFactor: Int, multiplier: Double, jitter: Double) -> ReconnectPolicy {
        let base = Duration.milliseconds(baseMilliseconds)
        return ReconnectPolicy(baseDelay: base, maxDelay: base * capFactor, multiplier: multiplier, jitterFraction: jitter)
    }

    @Test func backoffDelaysStayWithinBaseAndCap() async {
        await propertyCheck(
            count: 500,
            input: Gen.int(in: 1...10_000), Gen.int(in: 1...1_000), Gen.double(in: 1...4), Gen.double(in: 0...1),
            Gen.int(in: 1...2_000), Gen.uint64()
        ) { baseMilliseconds, capFactor, multiplier, jitter, attempt, seed in
            let policy = Self.policy(baseMilliseconds: baseMilliseconds, capFactor: capFactor, multiplier: multiplier, jitter: jitter)
            var random = SeededRandom(seed: seed)
            let delay = ReconnectController(policy: policy).backoffDelay(attempt: attempt, random: &random)
            #expect(delay >= policy.baseDelay && delay <= policy.maxDelay, "attempt \(attempt): \(delay)")
        }
    }

    /// Over any history of failures and ready connections, every retry is within [base, cap],
    /// except the fast first retry right after a ready connection was lost.
    @Test func retryDelaysStayWithinBaseAndCapExceptTheFastFirstRetry() async {
        let history = Gen.int(in: 0...FailureClass.allCases.count).array(of: 1...200)
        await propertyCheck(count: 300, input: history, Gen.int(in: 1...5_000), Gen.uint64()) { steps, baseMilliseconds, seed in
            let policy = Self.policy(baseMilliseconds: baseMilliseconds, capFactor: 50, multiplier: 2, jitter: 0.5)
            var controller = ReconnectController(policy: policy)
            var random = SeededRandom(seed: seed)
            var now = MonotonicInstant.zero
            var justReady = false
            for step in steps {
                now = now + .seconds(1)
                guard step < FailureClass.allCases.count else {
                    controller.recordReady(now: now)
                    justReady = true
                    continue
                }
                let failureClass = FailureClass.allCases[step]
                let decision = controller.recordFailure(failureClass, now: now, random: &random)
                if case .retry(let at, _, _) = decision {
                    let delay = at.duration(since: now)
                    let fast = justReady && failureClass == .transient && delay == policy.fastFirstRetryDelay
                    #expect(fast || (delay >= policy.baseDelay && delay <= policy.maxDelay), "\(failureClass): \(delay)")
                }
                if case .suspend(let until, .circuitOpen) = decision {
                    // Keep the history going past the cooldown, as the machine would.
                    now = until
                    controller.beginProbe(now: now)
                }
                justReady = false
            }
        }
    }

    /// Whatever the history, the controller never offers a retry before an open breaker's
    /// cooldown ends.
    @Test func noRetryIsOfferedBeforeTheBreakerCooldownEnds() async {
        let history = Gen.int(in: 0...FailureClass.allCases.count).array(of: 1...200)
        await propertyCheck(count: 300, input: history, Gen.int(in: 0...120), Gen.uint64()) { steps, stepSeconds, seed in
            var controller = ReconnectController()
            var random = SeededRandom(seed: seed)
            var now = MonotonicInstant.zero
            for step in steps {
                now = now + .seconds(Int64(stepSeconds))
                guard step < FailureClass.allCases.count else {
                    controller.recordReady(now: now)
                    continue
                }
                let decision = controller.recordFailure(FailureClass.allCases[step], now: now, random: &random)
                if case .retry(let at, _, _) = decision, case .open(let until) = controller.breaker, at < until {
                    Issue.record("retry offered for \(at) with the breaker open until \(until)")
                }
            }
        }
    }
}
