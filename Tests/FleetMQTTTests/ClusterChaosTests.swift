import BlueZSimulator
import Foundation
import Testing
import TestSupport

/// The cluster under the faults the ownership protocol states rules for, one after another on
/// one world (`ClusterWorld`: three daemons, six straps, one broker): a broker restart, RSSI
/// changes, a gateway cut from the broker and healed, a gateway losing power and coming back.
/// Throughout, the world counts every link: no strap is ever linked by two gateways, and at the
/// end every strap is owned and ready.
@Suite("Several gateways: the chaos run", .serialized)
struct ClusterChaosTests {
    typealias World = ClusterWorld

    /// Each strap's link-count per gateway, from the world.
    static func linksMade(_ ledger: WorldLedger) -> [String: [String: Int]] {
        Dictionary(uniqueKeysWithValues: World.straps.map { ($0.address, ledger.device($0.address).linksMade) })
    }

    static func doubleLinks(_ ledger: WorldLedger) -> Int {
        ledger.devices.values.map(\.doubleLinks).reduce(0, +)
    }

    @Test func noStrapIsEverLinkedTwiceAndEveryStrapEndsOwnedAndReady() async throws {
        let cluster = try ClusterWorld()
        var watch = try ClusterWorld.Watch(broker: cluster.broker)
        try cluster.startAll()
        func settled(_ what: String, _ watch: ClusterWorld.Watch, by allowed: @escaping @Sendable (String) -> Bool = { _ in true }) async throws {
            do {
                try await watch.until(what) { $0.allReady(World.segments, by: allowed) }
            } catch {
                Issue.record("\(error)\n\(cluster.diagnosis())")
                throw error
            }
        }
        try await settled("every strap ready on its owner", watch)
        var ledger = try cluster.world.snapshot()
        #expect(Self.doubleLinks(ledger) == 0)

        // 1. The broker restarts without its retained store: nothing is handed over, no link
        //    moves; the owners publish their claims again.
        let beforeRestart = Self.linksMade(ledger)
        let holders: [String: String] = Dictionary(uniqueKeysWithValues: World.straps.compactMap { strap in
            ledger.device(strap.address).holder.map { (strap.address, $0) }
        })
        try cluster.broker.restart()
        watch = try ClusterWorld.Watch(broker: cluster.broker)
        try await settled("every claim and state back after the broker's restart", watch)
        ledger = try cluster.world.snapshot()
        #expect(Self.linksMade(ledger) == beforeRestart, "a broker restart moved a link: \(cluster.diagnosis())")
        for strap in World.straps {
            #expect(watch.gateway(of: World.segment(strap.address)) == holders[strap.address], "\(strap.address)")
        }

        // 2. RSSI changes: each strap's second-best gateway now hears it best. A linked strap
        //    does not advertise, so nobody else can bid for it: the links stay where they are.
        for strap in World.straps {
            guard let holder = holders[strap.address] else { continue }
            for gateway in strap.heardBy.keys where gateway != holder {
                try cluster.world.setRSSI(-45, of: strap.address, heardBy: gateway)
            }
            try cluster.world.setRSSI(-85, of: strap.address, heardBy: holder)
        }

        // 3. The gateway holding the most straps is cut from the broker (its radio stays):
        //    fail-static, it keeps its links while its Will tells the others it is gone; healed,
        //    it is the owner again, and no strap was linked twice or moved.
        let byHolder = Dictionary(grouping: World.straps.map(\.address)) { holders[$0] ?? "" }
        guard let (cut, cutStraps) = byHolder.max(by: { $0.value.count < $1.value.count || ($0.value.count == $1.value.count && $0.key > $1.key) }),
              let relay = cluster.relays[cut]
        else {
            Issue.record("nobody holds anything: \(cluster.diagnosis())")
            return
        }
        let beforeCut = Self.linksMade(try cluster.world.snapshot())
        relay.partition()
        try await watch.until("\(cut)'s Will") { $0.status(of: cut) == "offline" }
        // Some heartbeats of the others pass while it is away (the lease, and more).
        // The others' heartbeats go on while it is away, past its lease (3 s: one a second).
        let othersAtCut = World.gatewayIDs.filter { $0 != cut }.map { ($0, watch.heartbeatCount(of: $0)) }
        try await watch.until("the others' heartbeats go on past the lease") { watch in
            othersAtCut.allSatisfy { watch.heartbeatCount(of: $0.0) >= $0.1 + 6 }
        }
        relay.heal()
        try await watch.until("\(cut) back online") { $0.status(of: cut) == "online" }
        try await settled("every strap ready after the partition healed", watch)
        ledger = try cluster.world.snapshot()
        #expect(Self.doubleLinks(ledger) == 0, "\(cluster.diagnosis())")
        #expect(Self.linksMade(ledger) == beforeCut, "no link moved or was made again over the RSSI changes and the partition")
        for address in cutStraps {
            #expect(ledger.device(address).linksMade == beforeCut[address], "\(address)'s link moved during the partition")
            #expect(watch.gateway(of: World.segment(address)) == cut, "\(address): the link holder wins the claim back")
        }

        // 4. A gateway loses power: its straps are ready elsewhere; back, it takes nothing (it
        //    hears no linked strap) and nothing moves.
        let victim = World.gatewayIDs.filter { id in World.straps.contains { ledger.device($0.address).holder == id } }.sorted().first ?? "gw1"
        let victimStraps = World.straps.map(\.address).filter { ledger.device($0).holder == victim }
        let killedAt = ContinuousClock.now
        cluster.kill(victim)
        try await settled("\(victim)'s straps ready elsewhere", watch) { $0 != victim }
        let handoffs = victimStraps.compactMap { watch.readyAt(World.segment($0)).map { $0 - killedAt } }.sorted()
        print("cluster chaos figure: \(victim) killed holding \(victimStraps.count) straps; ready elsewhere after \(handoffs)")
        let beforeReturn = Self.linksMade(try cluster.world.snapshot())
        let heartbeatsBefore = watch.heartbeatCount(of: victim)
        try cluster.start(victim)
        // Past its resync grace (lease + renewal = 4 s) and a settle: 6 heartbeats, one a second.
        try await watch.until("\(victim) back for 6 heartbeats") { $0.heartbeatCount(of: victim) >= heartbeatsBefore + 6 }
        try await settled("every strap ready after \(victim) came back", watch)
        ledger = try cluster.world.snapshot()
        #expect(Self.linksMade(ledger) == beforeReturn, "a returning gateway moved a link: \(cluster.diagnosis())")

        // The whole run: never two links to one strap; every strap owned by a live gateway.
        #expect(Self.doubleLinks(ledger) == 0, "\(cluster.diagnosis())")
        for strap in World.straps {
            let owner = watch.gateway(of: World.segment(strap.address))
            #expect(owner.map(cluster.liveGateways.contains) == true, "\(strap.address) owned by \(owner ?? "nobody")")
        }
        let refused = ledger.devices.values.map { $0.connectsWhileHeldElsewhere.values.reduce(0, +) }.reduce(0, +)
        print("cluster chaos figure: double links \(Self.doubleLinks(ledger)); Connects refused as held elsewhere \(refused)")
    }
}
