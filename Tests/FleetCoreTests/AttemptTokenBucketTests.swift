import Testing
import FleetCore

@Suite struct AttemptTokenBucketTests {
    let limit = AttemptRateLimit(burst: 2, refillInterval: .seconds(1))

    @Test func startsFullAndAllowsTheBurstBackToBack() {
        var bucket = AttemptTokenBucket(limit: limit, now: .zero)
        let taken = (0..<3).map { _ in bucket.take(now: .zero) }
        #expect(taken == [true, true, false])
    }

    @Test func earnsOneTokenPerIntervalAfterRunningDry() {
        var bucket = AttemptTokenBucket(limit: limit, now: .zero)
        _ = bucket.take(now: .zero)
        _ = bucket.take(now: .zero)
        let taken = [999, 1000, 1500].map { bucket.take(now: PoolFixture.instant(milliseconds: $0)) }
        #expect(taken == [false, true, false])
    }

    @Test func reportsTheNextRefillInstantOnlyWhenNotFull() {
        var bucket = AttemptTokenBucket(limit: limit, now: .zero)
        #expect(bucket.nextRefillInstant == nil)
        _ = bucket.take(now: PoolFixture.instant(seconds: 10))
        // While full the anchor follows the clock, so the spent token returns one interval later.
        #expect(bucket.nextRefillInstant == PoolFixture.instant(seconds: 11))
    }

    @Test func neverHoldsMoreThanTheBurstAfterAQuietPeriod() {
        var bucket = AttemptTokenBucket(limit: limit, now: .zero)
        _ = bucket.take(now: .zero)
        bucket.refill(now: PoolFixture.instant(seconds: 3600))
        #expect(bucket.tokens == 2)
    }

    @Test func aClockGoingBackwardsEarnsNothing() {
        var bucket = AttemptTokenBucket(limit: limit, now: PoolFixture.instant(seconds: 5))
        _ = bucket.take(now: PoolFixture.instant(seconds: 5))
        _ = bucket.take(now: PoolFixture.instant(seconds: 5))
        let taken = bucket.take(now: .zero)
        #expect(!taken)
    }

    @Test func lowersTheBurstOnReconfigureWithoutGrantingExtraTokens() {
        var bucket = AttemptTokenBucket(limit: AttemptRateLimit(burst: 8, refillInterval: .seconds(1)), now: .zero)
        bucket.reconfigure(limit, now: .zero)
        #expect(bucket.tokens == 2)
    }

    @Test func clampsANonPositiveBurstAndIntervalToAStrictLimit() {
        let clamped = AttemptRateLimit(burst: 0, refillInterval: .zero)
        #expect(clamped.burst == 1)
        #expect(clamped.refillInterval > .zero)
    }
}
