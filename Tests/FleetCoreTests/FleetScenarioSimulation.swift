import FleetCore

/// A discrete-event simulation of the fleet after every link drops at once, driven by the real
/// `PoolPolicy` and a simulated clock.
///
/// Model: every device is connected, spread evenly over the adapters, until t = 0, when every
/// link drops at once; each device asks for an attempt `firstRetryDelay` later; a granted attempt holds its adapter for `connectLatency` (connect and resolve) and
/// always succeeds, after which the device is ready. The policy is evaluated at every event
/// instant: retry due, attempt finished, and the plan's `nextGrantInstant`.
struct FleetScenarioSimulation {
    struct Parameters: CustomStringConvertible {
        var devices: Int
        var adapters: Int
        var slotsPerAdapter: Int
        var connectLatency: Duration
        var firstRetryDelay: Duration
        var rateLimit: AttemptRateLimit
        var seed: UInt64

        var description: String {
            "\(devices) devices, \(adapters)×\(slotsPerAdapter) slots, L=\(connectLatency), r=\(firstRetryDelay), "
                + "burst \(rateLimit.burst) per \(rateLimit.refillInterval), seed \(seed)"
        }
    }

    struct Outcome {
        /// When the last device became ready, or nil if the simulation stalled.
        var allReadyAt: MonotonicInstant?
        var grantInstants: [MonotonicInstant] = []
        var maxAttemptsInFlightOnOneAdapter = 0
        var maxLinksOnOneAdapter = 0
        var evictions = 0
        var evaluations = 0
    }

    static func run(_ parameters: Parameters) -> Outcome {
        var rng = SeededRandom(seed: parameters.seed)
        let adapterIDs = (0..<parameters.adapters).map(PoolFixture.adapter)
        let adapters = adapterIDs.map { AdapterSnapshot(id: $0, isPowered: true) }
        var devices: [DeviceID: PoolDeviceSnapshot] = [:]
        for number in 0..<parameters.devices {
            var rssi: [AdapterID: Int] = [:]
            for adapter in adapterIDs { rssi[adapter] = Int.random(in: -95 ... -40, using: &rng) }
            let id = PoolFixture.device(number)
            devices[id] = PoolDeviceSnapshot(id: id, membership: .pinned, rssi: rssi, link: .disconnected)
        }
        let configuration = PoolConfiguration(
            maxConnections: parameters.devices,
            defaultSlotsPerAdapter: parameters.slotsPerAdapter,
            attemptRateLimit: parameters.rateLimit
        )
        var policy = PoolPolicy(configuration: configuration, now: .zero)
        let retryDue = MonotonicInstant.zero + parameters.firstRetryDelay
        var finishing: [DeviceID: MonotonicInstant] = [:]
        var outcome = Outcome()
        var now = MonotonicInstant.zero
        var nextGrant: MonotonicInstant?

        // Before the loss: a healthy fleet, which the policy leaves alone.
        for (index, id) in devices.keys.sorted().enumerated() {
            devices[id]?.link = .connected(adapterIDs[index % adapterIDs.count], since: .zero)
        }
        let healthy = policy.evaluate(devices: Array(devices.values), adapters: adapters, conditions: .running, now: now)
        outcome.evictions += healthy.evictions.count
        outcome.grantInstants += healthy.grants.map { _ in now }
        for id in devices.keys { devices[id]?.link = .disconnected }

        while outcome.evaluations < 100_000 {
            for (id, at) in finishing where at <= now {
                finishing[id] = nil
                if case .attempting(let adapter) = devices[id]?.link {
                    devices[id]?.link = .connected(adapter, since: now)
                }
                policy.attemptFinished(device: id)
            }
            if now >= retryDue {
                for (id, device) in devices where device.link == .disconnected { devices[id]?.wantsAttempt = true }
            }
            if devices.values.allSatisfy({ if case .connected = $0.link { true } else { false } }) {
                outcome.allReadyAt = now
                return outcome
            }

            let plan = policy.evaluate(devices: Array(devices.values), adapters: adapters, conditions: .running, now: now)
            outcome.evaluations += 1
            outcome.evictions += plan.evictions.count
            for grant in plan.grants {
                devices[grant.device]?.link = .attempting(grant.adapter)
                devices[grant.device]?.wantsAttempt = false
                finishing[grant.device] = now + parameters.connectLatency
                outcome.grantInstants.append(now)
            }
            for adapter in adapterIDs {
                let links = devices.values.filter { $0.link.adapter == adapter }
                outcome.maxLinksOnOneAdapter = max(outcome.maxLinksOnOneAdapter, links.count)
                outcome.maxAttemptsInFlightOnOneAdapter = max(
                    outcome.maxAttemptsInFlightOnOneAdapter, links.filter(\.link.isAttempting).count
                )
            }
            nextGrant = plan.nextGrantInstant

            var upcoming = Array(finishing.values)
            if now < retryDue { upcoming.append(retryDue) }
            if let nextGrant, nextGrant > now { upcoming.append(nextGrant) }
            guard let next = upcoming.min() else { return outcome }
            now = next
        }
        return outcome
    }

    /// The largest number of grants inside any window, minus what the token bucket allows for
    /// that window (`burst + ⌊w / interval⌋`); positive means the rate limit was broken.
    static func worstRateExcess(_ instants: [MonotonicInstant], limit: AttemptRateLimit) -> Int {
        let sorted = instants.sorted()
        let interval = limit.refillInterval.nanosecondsClamped
        var worst = Int.min
        for start in sorted.indices {
            for end in start..<sorted.count {
                let window = sorted[end].nanoseconds - sorted[start].nanoseconds
                let allowed = limit.burst + Int(window / interval)
                worst = max(worst, (end - start + 1) - allowed)
            }
        }
        return worst
    }
}
