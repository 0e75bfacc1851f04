#if canImport(Glibc)
import Glibc
#endif
import PropertyBased
import Testing
import FleetCore

/// The ownership guarantees over random simulated worlds (`OwnershipWorld`): 2–4 gateways, up
/// to 12 devices, random RSSI, delays, reordering, heartbeat losses, deaths, restarts, broker
/// restarts and partitions. Each run is a seed; a failure names it.
///
/// The guarantee against two links at once holds under the faults of `scheduleGuaranteedFaults`:
/// every message arrives within `maxDelay` < `settle / 2` (reordered at will), at most one
/// heartbeat in a row is lost, gateways die (SIGKILL) and restart, the broker restarts (with or
/// without its retained store) and gateways reconnect within 3 s of each other. A partition (a
/// gateway that loses the broker but keeps its radio) is outside it: fail-static keeps its
/// links, so others claim and have their attempts refused; that is tested on its own.
@Suite struct OwnershipPropertyTests {
    /// A world with random size, timing and noise inside the guaranteed faults.
    static func world(seed: UInt64, draw: inout SeededRandom) -> OwnershipWorld {
        var parameters = OwnershipWorld.Parameters()
        parameters.seed = seed
        parameters.gateways = Int.random(in: 2...4, using: &draw)
        parameters.devices = Int.random(in: 1...12, using: &draw)
        parameters.maxDelay = .milliseconds(Int64.random(in: 20...450, using: &draw))
        parameters.heartbeatLoss = draw.unit() * 0.3
        parameters.maxConsecutiveHeartbeatLosses = 1
        parameters.rssiNoise = draw.unit() * 4
        parameters.hearingPeriod = .seconds(2)
        return OwnershipWorld.random(parameters)
    }

    /// Deaths and restarts, broker restarts, devices that move or leave and come back, from 60 s
    /// on; returns when the last one happens.
    static func scheduleGuaranteedFaults(in world: inout OwnershipWorld, draw: inout SeededRandom) -> Double {
        var at = 60.0
        for _ in 0..<Int.random(in: 1...3, using: &draw) {
            switch Int.random(in: 0...3, using: &draw) {
            case 0:
                let gateway = Int.random(in: 0..<world.parameters.gateways, using: &draw)
                world.schedule(.kill(gateway), atSeconds: at)
                at += 10 + draw.unit() * 50
                world.schedule(.restart(gateway), atSeconds: at)
            case 1:
                world.schedule(.brokerDown(losingRetained: draw.unit() < 0.5), atSeconds: at)
                at += 1 + draw.unit() * 30
                world.schedule(.brokerUp(reconnectSkew: .seconds(3)), atSeconds: at)
            case 2:
                // The device walks elsewhere.
                let device = Int.random(in: 0..<world.parameters.devices, using: &draw)
                for gateway in 0..<world.parameters.gateways {
                    world.schedule(.setRSSI(device: device, gateway: gateway, rssi: -95 + 50 * draw.unit()), atSeconds: at)
                }
            default:
                // The device leaves every gateway's range, and comes back to all of them at once:
                // the gateways that hear it bid at once, and the best must be the only one to
                // claim it.
                let device = Int.random(in: 0..<world.parameters.devices, using: &draw)
                for gateway in 0..<world.parameters.gateways {
                    world.schedule(.setRSSI(device: device, gateway: gateway, rssi: -120), atSeconds: at)
                }
                at += 30 + draw.unit() * 30
                for gateway in 0..<world.parameters.gateways {
                    world.schedule(.setRSSI(device: device, gateway: gateway, rssi: -95 + 50 * draw.unit()), atSeconds: at)
                }
            }
            at += 20 + draw.unit() * 40
        }
        return at
    }

    // MARK: - Precedence

    /// Gateways that receive the same claims in different orders keep the same greatest one,
    /// the greatest by precedence.
    @Test func theGreatestClaimDoesNotDependOnTheOrderOfArrival() async {
        let gateways: [GatewayID?] = [nil, OwnershipFixture.a, OwnershipFixture.b, OwnershipFixture.c]
        // One number per claim: epoch 1…5, gateway (or a release), revision 0…2.
        await propertyCheck(count: 200, input: Gen.int(in: 0...59).array(of: 1...12), Gen.uint64()) { codes, seed in
            let claims = codes.map { code in
                let revision = code % 3
                // The named gateway changes `linked` only with a new revision, so one precedence
                // never carries two link states.
                return OwnershipFixture.claim(
                    gateways[code / 3 % 4], epoch: UInt64(code / 12 + 1), revision: UInt64(revision), linked: revision % 2 == 1)
            }
            var random = SeededRandom(seed: seed)
            let expected = claims.max { $0.precedence < $1.precedence }
            for name in ["x", "y", "z"] {
                var machine = OwnershipMachine(gateway: GatewayID(name))
                for claim in claims.shuffled(using: &random) { _ = machine.handle(.claimReceived(claim), now: .zero) }
                #expect(machine.greatestClaim(for: OwnershipFixture.device) == expected, "\(claims)")
            }
        }
    }

    // MARK: - Agreement, service, no second link

    /// Under the guaranteed faults: nobody ever asks for a link another gateway wants or holds,
    /// no attempt is ever refused, and once the faults stop every live gateway agrees on each
    /// device's greatest claim, which names a live gateway that holds the device's link.
    @Test func agreesOnOneLinkedOwnerPerDeviceAndNeverOverlapsUnderTheGuaranteedFaults() async {
        await propertyCheck(count: 40, input: Gen.uint64()) { seed in
            var draw = SeededRandom(seed: seed)
            var world = Self.world(seed: seed, draw: &draw)
            let lastFault = Self.scheduleGuaranteedFaults(in: &world, draw: &draw)
            world.run(untilSeconds: lastFault + 100)
            world.runUntilQuiet()
            let context = "seed \(seed): \(world.parameters)"
            #expect(!world.counters.exceededEventBudget, "\(context)")
            #expect(world.counters.overlaps.isEmpty, "\(context): \(world.counters.overlaps.prefix(3))")
            #expect(world.counters.refusedAttempts == 0, "\(context)")
            #expect(world.disagreements().isEmpty, "\(context): \(world.disagreements())")
            #expect(world.unservedDevices().isEmpty, "\(context): \(world.unservedDevices())")
        }
    }

    /// The broker's retained record converges too: once the faults stop, it holds the claim
    /// every gateway agrees on.
    @Test func theRetainedRecordConvergesOnTheAgreedClaim() async {
        await propertyCheck(count: 15, input: Gen.uint64()) { seed in
            var draw = SeededRandom(seed: seed)
            var world = Self.world(seed: seed, draw: &draw)
            let lastFault = Self.scheduleGuaranteedFaults(in: &world, draw: &draw)
            world.run(untilSeconds: lastFault + 100)
            world.runUntilQuiet()
            for (index, device) in world.deviceIDs.enumerated() where world.disagreements()[index] == nil {
                let agreed = world.gateways.first { $0.isAlive }?.machine?.greatestClaim(for: device)
                #expect(world.retainedClaims[device] == agreed, "seed \(seed), device \(index)")
            }
        }
    }

    // MARK: - Fail-static

    /// A partitioned gateway keeps its links; others claim its devices and are refused; on
    /// reconnection the link holder wins (no link moves), and everyone agrees again.
    @Test func aPartitionedGatewayKeepsItsLinksAndWinsThemBackOnReconnecting() async {
        await propertyCheck(count: 8, input: Gen.uint64()) { seed in
            var draw = SeededRandom(seed: seed)
            var world = Self.world(seed: seed, draw: &draw)
            world.run(untilSeconds: 60)
            guard let cut = world.gatewayHoldingMostLinks() else { return }
            let held = world.holder.indices.filter { world.holder[$0] == cut }
            let movesBefore = world.counters.linkMoves
            let healAt = 60 + 5 + draw.unit() * 85
            world.schedule(.partition(cut), atSeconds: 60)
            world.schedule(.heal(cut), atSeconds: healAt)
            world.run(untilSeconds: healAt + 60)
            world.runUntilQuiet()
            let context = "seed \(seed): \(world.parameters), partition 60…\(healAt) s"
            #expect(!world.counters.exceededEventBudget, "\(context)")
            for device in held {
                #expect(world.holder[device] == cut, "\(context): device \(device)")
                #expect(world.counters.linkMoves[device] == movesBefore[device], "\(context): device \(device)")
            }
            #expect(world.disagreements().isEmpty, "\(context): \(world.disagreements())")
            #expect(world.unservedDevices().isEmpty, "\(context): \(world.unservedDevices())")
        }
    }

    // MARK: - Broker restart

    /// A broker restart, with or without its retained store, moves no link and changes no owner.
    @Test func aBrokerRestartChangesNoOwner() async {
        await propertyCheck(count: 10, input: Gen.uint64()) { seed in
            var draw = SeededRandom(seed: seed)
            var world = Self.world(seed: seed, draw: &draw)
            world.run(untilSeconds: 90)
            let owners = world.deviceIDs.indices.map(world.agreedOwner)
            let moves = world.counters.linkMoves
            let holders = world.holder
            let downFor = 1 + draw.unit() * 40
            let losingRetained = draw.unit() < 0.5
            world.schedule(.brokerDown(losingRetained: losingRetained), atSeconds: 90)
            world.schedule(.brokerUp(reconnectSkew: .seconds(3)), atSeconds: 90 + downFor)
            world.run(untilSeconds: 90 + downFor + 60)
            let context = "seed \(seed): \(world.parameters), down \(downFor) s, retained lost: \(losingRetained)"
            #expect(world.deviceIDs.indices.map(world.agreedOwner) == owners, "\(context)")
            #expect(world.counters.linkMoves == moves, "\(context)")
            #expect(world.holder == holders, "\(context)")
            #expect(world.counters.overlaps.isEmpty && world.counters.refusedAttempts == 0, "\(context)")
            #expect(!world.counters.exceededEventBudget, "\(context)")
        }
    }

    // MARK: - Handoff after a death

    /// The bound on a dead gateway's devices reaching a link elsewhere: its lapse (the Will, or
    /// `lease` after the last heartbeat, which may still be in flight: + maxDelay), the claim's
    /// round trip (maxDelay), `settle`, and one connection attempt.
    static func handoffBound(_ parameters: OwnershipWorld.Parameters) -> Duration {
        parameters.configuration.lease + parameters.maxDelay * 2 + parameters.configuration.settle
            + .milliseconds(parameters.connectTime.upperBound)
    }

    @Test func handsADeadGatewaysDevicesOverWithinTheBound() async {
        await propertyCheck(count: 10, input: Gen.uint64()) { seed in
            var draw = SeededRandom(seed: seed)
            var world = Self.world(seed: seed, draw: &draw)
            world.run(untilSeconds: 60)
            guard let victim = world.gatewayHoldingMostLinks() else { return }
            world.schedule(.kill(victim), atSeconds: 60)
            world.run(untilSeconds: 120)
            let bound = Self.handoffBound(world.parameters)
            for time in world.counters.handoffTimes {
                #expect(time <= bound, "seed \(seed): \(world.parameters): \(time) > \(bound)")
            }
            #expect(world.counters.overlaps.isEmpty, "seed \(seed)")
        }
    }

    // MARK: - No flapping

    /// With RSSI noise (σ up to 6 dB per reading) inside the margin and nothing else going on, a device's link moves
    /// at most once (from a first owner to a clearly better one), in ten minutes.
    @Test func noiseInsideTheMarginMovesNoLinkMoreThanOnce() async {
        await propertyCheck(count: 12, input: Gen.uint64()) { seed in
            var draw = SeededRandom(seed: seed)
            var parameters = OwnershipWorld.Parameters()
            parameters.seed = seed
            parameters.gateways = Int.random(in: 2...4, using: &draw)
            parameters.devices = Int.random(in: 4...12, using: &draw)
            parameters.rssiNoise = draw.unit() * 6
            parameters.hearingPeriod = .seconds(2)
            var world = OwnershipWorld.random(parameters)
            world.run(untilSeconds: 600)
            #expect(world.counters.linkMoves.allSatisfy { $0 <= 1 }, "seed \(seed): \(world.counters.linkMoves)")
            #expect(world.unservedDevices().isEmpty, "seed \(seed)")
        }
    }

    // MARK: - Figures (NOTES.md)

    /// Over fixed seeds, so that the figures in NOTES.md repeat: handoff times after a death
    /// (with the Will in 2–10 s, and with no Will before the lease), and messages at rest (a
    /// minute of 3 gateways and 8 devices, RSSI noise 3 dB). `WEARFLEET_OWNERSHIP_FIGURES=1`
    /// prints them.
    @Test func measuresHandoffTimesAndMessagesAtRest() {
        var withWill: [Duration] = []
        var withoutWill: [Duration] = []
        var rest: [OwnershipWorld.Message.Kind: Int] = [:]
        var deviceMinutes = 0.0
        var gatewayMinutes = 0.0
        let seeds = UInt64(1)...40
        for seed in seeds {
            var parameters = OwnershipWorld.Parameters()
            parameters.seed = seed
            parameters.gateways = 3
            parameters.devices = 8
            parameters.hearingPeriod = .seconds(2)
            parameters.rssiNoise = 3
            if seed % 2 == 0 { parameters.willDelay = 60_000...90_000 }
            var world = OwnershipWorld.random(parameters)
            world.run(untilSeconds: 90)
            let before = world.counters.published
            world.run(untilSeconds: 150)
            for kind in OwnershipWorld.Message.Kind.allCases {
                rest[kind, default: 0] += world.counters.published[kind, default: 0] - before[kind, default: 0]
            }
            deviceMinutes += Double(parameters.devices)
            gatewayMinutes += Double(parameters.gateways)
            guard let victim = world.gatewayHoldingMostLinks() else { continue }
            world.schedule(.kill(victim), atSeconds: 150)
            world.run(untilSeconds: 200)
            if seed % 2 == 0 { withoutWill += world.counters.handoffTimes } else { withWill += world.counters.handoffTimes }
            #expect(world.counters.overlaps.isEmpty, "seed \(seed)")
        }
        let bound = Self.handoffBound(OwnershipWorld.Parameters())
        #expect(!withWill.isEmpty && !withoutWill.isEmpty)
        #expect((withWill + withoutWill).allSatisfy { $0 <= bound })
        // At rest nothing is said about a device: no claims, only each gateway's own messages.
        #expect(rest[.claim, default: 0] == 0)
        let perGatewayMinute = Double(rest[.heartbeat, default: 0] + rest[.bids, default: 0]) / gatewayMinutes
        #expect(perGatewayMinute <= 12 + 12)
        if Self.showsFigures {
            func seconds(_ values: [Duration], _ fraction: Double) -> String {
                let value = Self.percentile(values, fraction).secondsDouble
                return "\((value * 10).rounded() / 10) s"
            }
            print(
                "ownership figures over \(seeds.count) seeds: handoff with a Will p50 \(seconds(withWill, 0.5))",
                "p99 \(seconds(withWill, 0.99)) max \(seconds(withWill, 1)) (n \(withWill.count)); without a Will",
                "p50 \(seconds(withoutWill, 0.5)) p99 \(seconds(withoutWill, 0.99)) max \(seconds(withoutWill, 1))",
                "(n \(withoutWill.count)); bound \(bound.secondsDouble) s; at rest per device-minute:",
                "claims \(Double(rest[.claim, default: 0]) / deviceMinutes); per gateway-minute: heartbeats",
                "\(Double(rest[.heartbeat, default: 0]) / gatewayMinutes), bids \(Double(rest[.bids, default: 0]) / gatewayMinutes)")
        }
    }

    static var showsFigures: Bool {
        #if canImport(Glibc)
        getenv("WEARFLEET_OWNERSHIP_FIGURES") != nil
        #else
        false
        #endif
    }

    static func percentile(_ values: [Duration], _ fraction: Double) -> Duration {
        let sorted = values.sorted()
        guard !sorted.isEmpty else { return .zero }
        return sorted[min(sorted.count - 1, Int((Double(sorted.count - 1) * fraction).rounded(.up)))]
    }
}

extension OwnershipWorld {
    /// The live gateway that holds the most links (the lowest index among equals); nil if no
    /// gateway holds one.
    func gatewayHoldingMostLinks() -> Int? {
        let counts = gateways.indices.map { gateway in holder.filter { $0 == gateway }.count }
        guard let most = counts.max(), most > 0 else { return nil }
        return counts.firstIndex(of: most)
    }
}
