import BlueZSimulator
import DBus
import FleetControl
import Foundation
import Testing
import TestSupport

/// `WatchValues` through the installed bus policy, with real uids: the socket reaches a member
/// of group `wearfleet` (the bus passes the descriptor), and an outsider is refused.
@Suite("Watching values under the installed bus policy")
struct ControlPolicyWatchTests {
    @Test(.enabled(if: PolicyBus.isPossible, "needs root: a mount namespace and other uids"))
    func membersOfTheWearfleetGroupMayWatchAndOthersMayNot() async throws {
        let strap = "AA:BB:CC:00:00:01"
        let fleet = try await PolicyFleet.start(straps: [strap], pinned: [strap], seed: 1)
        defer { fleet.files.remove() }
        let bus = fleet.bus

        // SIGINT after 5 s: the watch ends cleanly (exit 0) having printed what came meanwhile
        // (the strap notifies every second).
        let watch = ["/usr/bin/timeout", "--preserve-status", "-s", "INT", "5", Commands.wearfleetctl, "watch", "--json", "--bus", bus.address]
        let member = PolicyBus.asUser(PolicyBus.operatorUID, group: PolicyBus.nobodyUID, groups: [PolicyBus.wearfleetUID])
        let asMember = try await Commands.run(member + watch)
        #expect(asMember.status == 0, "\(asMember.errors)")
        let first = try #require(asMember.output.split(separator: "\n").first)
        let record = try #require(try JSONSerialization.jsonObject(with: Data(first.utf8)) as? [String: Any])
        #expect(record["device"] as? String == strap)

        let nobody = PolicyBus.asUser(PolicyBus.nobodyUID, group: PolicyBus.nobodyUID)
        let asNobody = try await Commands.run(nobody + watch)
        #expect(asNobody.status == ControlClientError.ExitCode.permissionDenied)
        #expect(asNobody.output.isEmpty)

        #expect(await fleet.daemon.stop() == 0)
        await fleet.simulator.stop()
    }
}
