import Testing
import PropertyBased
import FleetCore

/// 100 pinned devices over 4 adapters lose their links at the same instant.
@Suite struct FleetScenarioTests {
    /// Connect plus service resolution.
    static let latency = Duration.seconds(2)

    /// The first retry after the simultaneous link loss, as the real reconnect controller (with
    /// its default policy) decides it for a device that had been ready for a while.
    static let firstRetry: Duration = {
        var controller = ReconnectController()
        var random = SeededRandom(seed: 7)
        let lossInstant = MonotonicInstant.zero + .seconds(600)
        controller.recordReady(now: .zero)
        guard case .retry(let at, _, _) = controller.recordFailure(.transient, now: lossInstant, random: &random) else {
            return .seconds(3600)  // makes every bound assertion fail loudly
        }
        return at.duration(since: lossInstant)
    }()

    @Test func theControllersFirstRetryIsTheFastOne() {
        #expect(Self.firstRetry == ReconnectPolicy().fastFirstRetryDelay)
        #expect(Self.firstRetry == .milliseconds(250))
    }

    static func parameters(rateLimit: AttemptRateLimit) -> FleetScenarioSimulation.Parameters {
        .init(devices: 100, adapters: 4, slotsPerAdapter: 25, connectLatency: latency,
              firstRetryDelay: firstRetry, rateLimit: rateLimit, seed: 100)
    }

    static let rateLimits = [
        AttemptRateLimit.default,  // adapters are the bottleneck
        AttemptRateLimit(burst: 4, refillInterval: .seconds(1)),  // the token bucket is
    ]

    @Test(arguments: rateLimits)
    func neverHasMoreThanOneAttemptInFlightPerAdapter(rateLimit: AttemptRateLimit) {
        let outcome = FleetScenarioSimulation.run(Self.parameters(rateLimit: rateLimit))
        #expect(outcome.maxAttemptsInFlightOnOneAdapter == 1)
        #expect(outcome.maxLinksOnOneAdapter <= 25)
        #expect(outcome.evictions == 0)
    }

    @Test(arguments: rateLimits)
    func keepsAttemptsWithinTheFleetRateLimit(rateLimit: AttemptRateLimit) {
        let outcome = FleetScenarioSimulation.run(Self.parameters(rateLimit: rateLimit))
        #expect(outcome.grantInstants.count == 100)
        #expect(FleetScenarioSimulation.worstRateExcess(outcome.grantInstants, limit: rateLimit) <= 0)
    }

    @Test(arguments: rateLimits)
    func bringsAllDevicesBackWithinThePromisedBound(rateLimit: AttemptRateLimit) throws {
        let parameters = Self.parameters(rateLimit: rateLimit)
        let outcome = FleetScenarioSimulation.run(parameters)
        let readyAt = try #require(outcome.allReadyAt)
        let recovery = readyAt.duration(since: .zero)
        let bound = try #require(PoolPolicy.recoveryBound(
            devices: 100, adapters: 4, slotsPerAdapter: 25, connectLatency: Self.latency,
            firstRetryDelay: Self.firstRetry, rateLimit: rateLimit
        ))
        let floor = try #require(PoolPolicy.recoveryLowerBound(
            devices: 100, adapters: 4, connectLatency: Self.latency, firstRetryDelay: Self.firstRetry, rateLimit: rateLimit
        ))
        #expect(recovery <= bound)
        #expect(recovery >= floor)
        // The bound is not vacuous: it is within 1.5× of what the simulation achieves.
        #expect(bound / recovery <= 1.5)
    }

    @Test func statesTheRecoveryBoundForTheDefaultRateLimit() {
        // 0.25 s first retry + 25 serial attempts × 2 s + (100 − 4) tokens × 0.25 s.
        let bound = PoolPolicy.recoveryBound(
            devices: 100, adapters: 4, slotsPerAdapter: 25, connectLatency: Self.latency,
            firstRetryDelay: Self.firstRetry, rateLimit: .default
        )
        #expect(bound == .milliseconds(74_250))
    }

    @Test func hasNoRecoveryBoundWhenTheDevicesDoNotFitTheSlots() {
        let bound = PoolPolicy.recoveryBound(
            devices: 100, adapters: 4, slotsPerAdapter: 5, connectLatency: Self.latency,
            firstRetryDelay: Self.firstRetry, rateLimit: .default
        )
        #expect(bound == nil)
    }

    /// The bound is a formula, so it must hold for other fleets too, including ones where every
    /// device prefers the same adapter.
    @Test func recoversWithinTheBoundForRandomFleets() async {
        let input = zip(
            Gen.int(in: 1...60), Gen.int(in: 1...4), Gen.int(in: 100...3000),
            Gen.int(in: 0...1000), Gen.int(in: 1...6), Gen.int(in: 50...2000)
        )
        await propertyCheck(count: 40, input: input, Gen.uint64()) { shape, seed in
            let (devices, adapters, latencyMS, retryMS, burst, intervalMS) = shape
            let slots = (devices + adapters - 1) / adapters + Int(seed % 4)
            let parameters = FleetScenarioSimulation.Parameters(
                devices: devices, adapters: adapters, slotsPerAdapter: slots,
                connectLatency: .milliseconds(latencyMS), firstRetryDelay: .milliseconds(retryMS),
                rateLimit: AttemptRateLimit(burst: burst, refillInterval: .milliseconds(intervalMS)), seed: seed
            )
            let outcome = FleetScenarioSimulation.run(parameters)
            let readyAt = try #require(outcome.allReadyAt, "\(parameters)")
            let bound = try #require(PoolPolicy.recoveryBound(
                devices: devices, adapters: adapters, slotsPerAdapter: slots,
                connectLatency: parameters.connectLatency, firstRetryDelay: parameters.firstRetryDelay,
                rateLimit: parameters.rateLimit
            ))
            #expect(readyAt.duration(since: .zero) <= bound, "\(parameters)")
            #expect(outcome.maxAttemptsInFlightOnOneAdapter <= 1, "\(parameters)")
            #expect(FleetScenarioSimulation.worstRateExcess(outcome.grantInstants, limit: parameters.rateLimit) <= 0, "\(parameters)")
        }
    }
}
