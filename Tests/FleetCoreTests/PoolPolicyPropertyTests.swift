import Testing
import PropertyBased
import FleetCore

/// Invariants of one evaluation over random, self-consistent fleets.
@Suite struct PoolPolicyPropertyTests {
    func evaluate(_ fleet: PoolFleet) -> PoolPlan {
        var policy = PoolPolicy(configuration: fleet.configuration, now: .zero)
        return policy.evaluate(devices: fleet.devices, adapters: fleet.adapters, conditions: fleet.conditions, now: fleet.now)
    }

    @Test func neverPlacesMoreDevicesOnAnAdapterThanItHasSlots() async {
        await propertyCheck(count: 300, input: Gen.uint64()) { seed in
            let fleet = PoolFleet.random(seed: seed)
            let plan = evaluate(fleet)
            for adapter in fleet.adapters {
                let placed = plan.placements.values.filter { $0 == adapter.id }.count
                #expect(placed <= fleet.configuration.slots(for: adapter.id), "seed \(seed)")
            }
        }
    }

    @Test func placesOnlyOnPoweredAdaptersThatReachTheDevice() async {
        await propertyCheck(count: 300, input: Gen.uint64()) { seed in
            let fleet = PoolFleet.random(seed: seed)
            let plan = evaluate(fleet)
            for device in fleet.devices {
                guard let adapter = plan.placements[device.id] else { continue }
                #expect(fleet.isPowered(adapter) && device.isReachable(on: adapter) && device.isEligible, "seed \(seed)")
            }
        }
    }

    @Test func neverPlacesMorePoolDevicesThanMaxConnectionsLeavesAfterPinned() async {
        await propertyCheck(count: 300, input: Gen.uint64()) { seed in
            let fleet = PoolFleet.random(seed: seed)
            let plan = evaluate(fleet)
            let pinned = Set(fleet.devices.filter(\.isPinned).map(\.id))
            let placedPinned = plan.placements.keys.filter { pinned.contains($0) }.count
            let placedPool = plan.placements.count - placedPinned
            #expect(placedPool <= max(0, fleet.configuration.maxConnections - placedPinned), "seed \(seed)")
        }
    }

    @Test func neverLeavesOutAReachablePinnedDeviceForAPoolDevice() async {
        await propertyCheck(count: 300, input: Gen.uint64()) { seed in
            let fleet = PoolFleet.random(seed: seed)
            let plan = evaluate(fleet)
            let pinned = Set(fleet.devices.filter(\.isPinned).map(\.id))
            for device in fleet.devices where device.isPinned && device.isEligible && plan.placements[device.id] == nil {
                for adapter in fleet.adapters where adapter.isPowered && device.isReachable(on: adapter.id) {
                    let onAdapter = plan.placements.filter { $0.value == adapter.id }.map(\.key)
                    #expect(onAdapter.allSatisfy { pinned.contains($0) }, "seed \(seed)")
                    #expect(onAdapter.count >= fleet.configuration.slots(for: adapter.id), "seed \(seed)")
                }
            }
        }
    }

    @Test func grantsAtMostOneAttemptPerAdapterAndNoneOnABusyOne() async {
        await propertyCheck(count: 300, input: Gen.uint64()) { seed in
            let fleet = PoolFleet.random(seed: seed)
            let plan = evaluate(fleet)
            let busy = Set(fleet.devices.compactMap { $0.link.isAttempting ? $0.link.adapter : nil })
            let granted = plan.grants.map(\.adapter)
            #expect(Set(granted).count == granted.count, "seed \(seed)")
            #expect(busy.isDisjoint(with: granted), "seed \(seed)")
        }
    }

    @Test func grantsNeverExceedFreeSlotsMaxConnectionsOrTheBurst() async {
        await propertyCheck(count: 300, input: Gen.uint64()) { seed in
            let fleet = PoolFleet.random(seed: seed)
            let plan = evaluate(fleet)
            for adapter in fleet.adapters {
                let held = fleet.devices.filter { $0.link.adapter == adapter.id }.count
                let granted = plan.grants.filter { $0.adapter == adapter.id }.count
                #expect(held + granted <= fleet.configuration.slots(for: adapter.id), "seed \(seed)")
            }
            let held = fleet.devices.filter { $0.link.adapter != nil }.count
            let pinned = Set(fleet.devices.filter(\.isPinned).map(\.id))
            let poolGrants = plan.grants.filter { !pinned.contains($0.device) }.count
            if poolGrants > 0 {
                #expect(held + plan.grants.count <= fleet.configuration.maxConnections, "seed \(seed)")
            }
            #expect(plan.grants.count <= fleet.configuration.attemptRateLimit.burst, "seed \(seed)")
        }
    }

    @Test func grantsOnlyToDevicesThatMayAttempt() async {
        await propertyCheck(count: 300, input: Gen.uint64()) { seed in
            let fleet = PoolFleet.random(seed: seed)
            let plan = evaluate(fleet)
            let byID = Dictionary(uniqueKeysWithValues: fleet.devices.map { ($0.id, $0) })
            if !(fleet.conditions.bluetoothdPresent && fleet.conditions.engineRunning) {
                #expect(plan.grants.isEmpty, "seed \(seed)")
            }
            for grant in plan.grants {
                let device = try #require(byID[grant.device])
                #expect(device.wantsAttempt && device.isEligible && !device.restoreInProgress, "seed \(seed)")
                #expect(device.link == .disconnected && fleet.isPowered(grant.adapter), "seed \(seed)")
                #expect(plan.placements[grant.device] == grant.adapter, "seed \(seed)")
            }
        }
    }

    @Test func evictsOnlyHeldLinksAndNeverPlacesADeviceWhereItIsEvicted() async {
        await propertyCheck(count: 300, input: Gen.uint64()) { seed in
            let fleet = PoolFleet.random(seed: seed)
            let plan = evaluate(fleet)
            let byID = Dictionary(uniqueKeysWithValues: fleet.devices.map { ($0.id, $0) })
            for eviction in plan.evictions {
                #expect(byID[eviction.device]?.link.adapter == eviction.adapter, "seed \(seed)")
                #expect(plan.placements[eviction.device] != eviction.adapter, "seed \(seed)")
            }
        }
    }

    /// Hysteresis: once the runtime has carried out a plan, evaluating again at the same instant
    /// asks for no further evictions, so the pool does not flap.
    @Test func asksForNoFurtherEvictionsOnceAPlanHasBeenCarriedOut() async {
        await propertyCheck(count: 300, input: Gen.uint64()) { seed in
            var fleet = PoolFleet.random(seed: seed)
            fleet.configuration.minimumDwell = max(fleet.configuration.minimumDwell, .seconds(1))
            fleet.conditions = .running
            var policy = PoolPolicy(configuration: fleet.configuration, now: .zero)
            let plan = policy.evaluate(devices: fleet.devices, adapters: fleet.adapters, conditions: fleet.conditions, now: fleet.now)
            let evicted = Set(plan.evictions.map(\.device))
            let granted = Dictionary(uniqueKeysWithValues: plan.grants.map { ($0.device, $0.adapter) })
            for index in fleet.devices.indices {
                let id = fleet.devices[index].id
                if evicted.contains(id) {
                    fleet.devices[index].link = .disconnected
                    fleet.devices[index].wantsAttempt = false
                } else if let adapter = granted[id] {
                    fleet.devices[index].link = .connected(adapter, since: fleet.now)
                    fleet.devices[index].wantsAttempt = false
                    policy.attemptFinished(device: id)
                }
            }
            let again = policy.evaluate(devices: fleet.devices, adapters: fleet.adapters, conditions: fleet.conditions, now: fleet.now)
            #expect(again.evictions.isEmpty, "seed \(seed): \(again.evictions)")
        }
    }

    @Test func givesTheSamePlanWhateverTheOrderOfTheSnapshots() async {
        await propertyCheck(count: 200, input: Gen.uint64()) { seed in
            let fleet = PoolFleet.random(seed: seed)
            var shuffled = fleet
            var rng = SeededRandom(seed: seed ^ 0x5EED)
            shuffled.devices.shuffle(using: &rng)
            shuffled.adapters.shuffle(using: &rng)
            #expect(evaluate(fleet) == evaluate(shuffled), "seed \(seed)")
        }
    }
}
