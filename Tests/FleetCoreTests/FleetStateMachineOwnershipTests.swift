import FleetCore
import Testing

/// The fleet under the ownership gate: a device this gateway was not given is neither wanted
/// nor granted an attempt; a link in hand stays until the ownership machine takes it away.
struct FleetStateMachineOwnershipTests {
    typealias Fleet = FleetStateMachineTests
    static let hci0 = Fleet.hci0
    static let t0 = Fleet.t0

    static func found(_ id: DeviceID, in fleet: inout FleetStateMachine, connected: Bool = false) {
        _ = fleet.handle(
            .device(id, .deviceFound(adapter: hci0), objects: [.init(adapter: hci0, rssi: -60, connected: connected)]), now: t0)
    }

    @Test func aPinnedDeviceWaitsToBeGivenThenIsWantedAndTakenAwayAgain() {
        let strap = Fleet.strap
        var fleet = FleetStateMachine(configuration: Fleet.configuration(pinned: [strap]), now: Self.t0, seed: 1)
        _ = fleet.handle(.ownershipGate(enabled: true), now: Self.t0)
        _ = fleet.handle(.start, now: Self.t0)
        _ = fleet.handle(.bluetoothdAppeared(held: [], adapters: [Self.hci0]), now: Self.t0)
        _ = fleet.handle(.adapterChanged(Self.hci0, powered: true), now: Self.t0)
        let started = fleet.handle(.started, now: Self.t0)
        #expect(!Fleet.deliveries(started, to: strap).contains(.policyUpdated(wanted: true)), "not given yet")
        #expect(fleet.devices[strap]?.awaitingOwnership == true)
        Self.found(strap, in: &fleet)
        _ = fleet.handle(.deviceOutput(.requestAttempt(strap)), now: Self.t0)
        #expect(Fleet.deliveries(fleet.handle(.evaluate, now: Self.t0), to: strap).isEmpty, "no attempt for a device not given")

        let given = fleet.handle(.ownershipDecided(strap, linkAllowed: true), now: Self.t0)
        #expect(Fleet.deliveries(given, to: strap) == [.policyUpdated(wanted: true)])
        _ = fleet.handle(.deviceOutput(.requestAttempt(strap)), now: Self.t0)
        #expect(Fleet.deliveries(fleet.handle(.evaluate, now: Self.t0), to: strap) == [.attemptGranted(adapter: Self.hci0)])

        let taken = fleet.handle(.ownershipDecided(strap, linkAllowed: false), now: Self.t0)
        #expect(Fleet.deliveries(taken, to: strap) == [.policyUpdated(wanted: false)])
    }

    @Test func turningTheGateOnKeepsLinksInHandAndStopsTheRest() {
        let (linked, waiting) = (Fleet.strap, Fleet.watch)
        var fleet = Fleet.running(Fleet.configuration(pinned: [linked, waiting]))
        Self.found(linked, in: &fleet, connected: true)
        _ = fleet.handle(.device(linked, .connected, objects: [.init(adapter: Self.hci0, connected: true)]), now: Self.t0)
        Self.found(waiting, in: &fleet)
        let gated = fleet.handle(.ownershipGate(enabled: true), now: Self.t0)
        #expect(Fleet.deliveries(gated, to: linked).isEmpty, "its link stays until the owner decides")
        #expect(Fleet.deliveries(gated, to: waiting) == [.policyUpdated(wanted: false)])
        #expect(fleet.devices[linked]?.awaitingOwnership == false && fleet.devices[waiting]?.awaitingOwnership == true)

        let opened = fleet.handle(.ownershipGate(enabled: false), now: Self.t0)
        #expect(Fleet.deliveries(opened, to: waiting) == [.policyUpdated(wanted: true)])
        #expect(fleet.devices.values.allSatisfy { !$0.awaitingOwnership })
        // A late decision after the gate is off changes nothing.
        #expect(Fleet.deliveries(fleet.handle(.ownershipDecided(waiting, linkAllowed: false), now: Self.t0), to: waiting).isEmpty)
    }

    @Test func aHeldDeviceStaysHeldWhenGivenAndAReconnectWaitsForOwnership() {
        let strap = Fleet.strap
        var fleet = Fleet.running(Fleet.configuration(pinned: [strap]))
        _ = fleet.handle(.ownershipGate(enabled: true), now: Self.t0)
        _ = fleet.handle(.command(.disconnect(strap)), now: Self.t0)
        let given = fleet.handle(.ownershipDecided(strap, linkAllowed: true), now: Self.t0)
        #expect(!Fleet.deliveries(given, to: strap).contains(.policyUpdated(wanted: true)), "held by an operator")
        _ = fleet.handle(.ownershipDecided(strap, linkAllowed: false), now: Self.t0)
        let reconnected = fleet.handle(.command(.reconnect(strap)), now: Self.t0)
        #expect(!Fleet.deliveries(reconnected, to: strap).contains(.policyUpdated(wanted: true)), "not this gateway's")
    }
}
