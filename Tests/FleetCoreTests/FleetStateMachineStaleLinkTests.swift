import FleetCore
import Testing

/// A machine that asks for an attempt while BlueZ still reports its link (a teardown's
/// `Disconnect` that did not take) would wait for a grant forever: it is told of the link.
@Suite("FleetStateMachine: a link the machine no longer counts on")
struct FleetStateMachineStaleLinkTests {
    @Test func anAttemptAskedForWhileBlueZReportsTheLinkAdoptsIt() {
        let strap = FleetStateMachineTests.strap
        let hci0 = FleetStateMachineTests.hci0
        var fleet = FleetStateMachineTests.running(FleetStateMachineTests.configuration())
        _ = fleet.handle(.device(strap, .connected, objects: [.init(adapter: hci0, connected: true)]), now: FleetStateMachineTests.t0)
        let actions = fleet.handle(.deviceOutput(.requestAttempt(strap)), now: FleetStateMachineTests.t0)
        #expect(FleetStateMachineTests.deliveries(actions, to: strap) == [.deviceFound(adapter: hci0), .connected])
        #expect(fleet.devices[strap]?.link.adapter == hci0)
        // Once the link is gone, a request waits for its grant as usual.
        _ = fleet.handle(.device(strap, .disconnected(nil), objects: [.init(adapter: hci0)]), now: FleetStateMachineTests.t0)
        let later = fleet.handle(.deviceOutput(.requestAttempt(strap)), now: FleetStateMachineTests.t0)
        #expect(FleetStateMachineTests.deliveries(later, to: strap).isEmpty)
    }
}
