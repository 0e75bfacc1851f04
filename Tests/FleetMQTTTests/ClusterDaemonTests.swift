import BlueZSimulator
import Foundation
import Testing
import TestSupport

/// Three real daemons sharing six straps through one broker (`ClusterWorld`): each strap linked
/// by one gateway, commands answered by its owner, a dead gateway's straps taken by the others.
@Suite("Several gateways share one fleet through the broker", .serialized)
struct ClusterDaemonTests {
    typealias World = ClusterWorld

    @Test func eachStrapIsLinkedByOneGatewayAndADeadGatewaysStrapsAreLinkedElsewhere() async throws {
        let cluster = try ClusterWorld()
        let watch = try ClusterWorld.Watch(broker: cluster.broker)
        let started = ContinuousClock.now
        try cluster.startAll()

        // 1. Every strap ready, each through exactly one gateway: the one the world says holds it.
        do {
            try await watch.until("every strap ready on the gateway that owns it") { $0.allReady(World.segments) }
        } catch {
            Issue.record("\(error)\n\(cluster.diagnosis())")
            return
        }
        let ledger = try cluster.world.snapshot()
        for strap in World.straps {
            let record = ledger.device(strap.address)
            #expect(record.doubleLinks == 0, "\(strap.address) linked by two gateways at once: \(record)")
            #expect(record.linkedBy.count == 1, "\(strap.address): \(record)")
            #expect(record.linksMade.count == 1, "only the owner ever linked it, once: \(record)")
            #expect(record.connectsWhileHeldElsewhere.isEmpty, "no gateway tried a strap another held: \(record)")
            #expect(record.holder == watch.gateway(of: World.segment(strap.address)), "the state comes from the link's gateway: \(record)")
            #expect(strap.heardBy[record.holder ?? ""] != nil, "held by a gateway that hears it: \(record)")
        }
        let allReadyAfter = (World.segments.compactMap(watch.readyAt).max() ?? started) - started
        print("cluster figure: 6 straps over 3 gateways all ready after \(allReadyAfter)")

        // A command to a strap is run by its owner alone: one result, the value read through its
        // link (a gateway without the link would answer at once, with an error).
        let first = World.segment(World.straps[0].address)
        let resultTopic = "\(World.prefix)/device/\(first)/command/result"
        let results = try await BrokerSubscriber(port: cluster.broker.port, topics: [resultTopic])
        for id in ["who", "after"] {
            try publish(
                port: cluster.broker.port, topic: "\(World.prefix)/device/\(first)/command",
                #"{"id":"\#(id)","op":"read","characteristic":"2a24"}"#)
        }
        let answer = try await results.first(on: resultTopic, within: World.patience) { $0.payload.contains(#""id":"who""#) }
        #expect(answer.payload.contains(#""ok":true"#), "\(answer)")
        _ = try await results.first(on: resultTopic, within: World.patience) { $0.payload.contains(#""id":"after""#) }
        #expect(results.all(on: resultTopic).count == 2, "one answer per command: \(results.all(on: resultTopic))")

        // 2. The gateway holding the most straps loses power: its straps go to the others.
        let holders = Dictionary(grouping: World.straps.map(\.address)) { ledger.device($0).holder ?? "" }
        guard let (victim, lost) = holders.max(by: { $0.value.count < $1.value.count || ($0.value.count == $1.value.count && $0.key > $1.key) })
        else {
            Issue.record("nobody holds anything: \(cluster.diagnosis())")
            return
        }
        let killedAt = ContinuousClock.now
        cluster.kill(victim)
        let lostSegments = Set(lost.map(World.segment))
        do {
            try await watch.until("\(victim)'s straps ready elsewhere") { $0.allReady(lostSegments) { $0 != victim } }
        } catch {
            Issue.record("\(error)\n\(cluster.diagnosis())")
            return
        }
        let after = try cluster.world.snapshot()
        for address in lost {
            let record = after.device(address)
            #expect(record.doubleLinks == 0, "\(address): \(record)")
            #expect(record.holder == watch.gateway(of: World.segment(address)), "\(address): \(record)")
            #expect(record.heldAtDeath[victim] == 1, "\(address) was linked by \(victim) when it died: \(record)")
        }
        let refused = after.devices.values.map { $0.connectsWhileHeldElsewhere.values.reduce(0, +) }.reduce(0, +)
        print("cluster figure: Connects at a strap another gateway held, whole run: \(refused)")
        let handoffs = lostSegments.compactMap { watch.readyAt($0).map { $0 - killedAt } }.sorted()
        print("cluster figure: \(victim) killed holding \(lost.count) straps; ready elsewhere after \(handoffs)")
    }
}
