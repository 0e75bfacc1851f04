@testable import FleetCore
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

    /// A new coordinator (a reconnection with new settings) knows nothing of what the last one
    /// gave: turning the gate on again makes every device without a link wait, its attempt
    /// called off; links in hand stay.
    @Test func theGateTurnedOnAgainTakesBackWhatWasGivenButNotLinks() {
        let (linked, attempting) = (Fleet.strap, Fleet.watch)
        var fleet = Fleet.running(Fleet.configuration(pinned: [linked, attempting]))
        _ = fleet.handle(.ownershipGate(enabled: true), now: Self.t0)
        for id in [linked, attempting] {
            Self.found(id, in: &fleet)
            _ = fleet.handle(.ownershipDecided(id, linkAllowed: true), now: Self.t0)
        }
        _ = fleet.handle(.device(linked, .connected, objects: [.init(adapter: Self.hci0, connected: true)]), now: Self.t0)
        _ = fleet.handle(.deviceOutput(.requestAttempt(attempting)), now: Self.t0)
        _ = fleet.handle(.evaluate, now: Self.t0)
        #expect(fleet.devices[attempting]?.link == .attempting(Self.hci0))
        let again = fleet.handle(.ownershipGate(enabled: true), now: Self.t0)
        #expect(Fleet.deliveries(again, to: attempting) == [.policyUpdated(wanted: false)], "its attempt is called off")
        #expect(Fleet.deliveries(again, to: linked).isEmpty, "the link stays")
        #expect(fleet.devices[attempting]?.awaitingOwnership == true && fleet.devices[linked]?.awaitingOwnership == false)
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

    // MARK: - What the ownership machine is told

    @Test func aPinnedDeviceWaitingToBeGivenKeepsDiscoveryOnUntilItIsLinked() {
        typealias Discovery = FleetStateMachineDiscoveryTests
        var fleet = Discovery.running()
        #expect(Discovery.settle(&fleet, after: .evaluate).isEmpty, "nothing to look for: discovery stays off")
        let gated = Discovery.settle(&fleet, after: .ownershipGate(enabled: true))
        #expect(gated.contains { $0.adapter == Self.hci0 && $0.call.methodName == "StartDiscovery" }, "\(gated)")
        #expect(fleet.wantedDiscovery(on: fleet.adapters[Self.hci0]!) == .anyDevice, "heard however it advertises, to bid")
        // Given and linked: nothing left to bid for unheard, discovery goes off.
        _ = fleet.handle(.ownershipDecided(Discovery.strap, linkAllowed: true), now: Self.t0)
        _ = fleet.handle(
            .device(Discovery.strap, .connected, objects: [.init(adapter: Self.hci0, connected: true)]), now: Self.t0)
        #expect(fleet.wantedDiscovery(on: fleet.adapters[Self.hci0]!) == nil)
    }

    /// bluetoothd keeps a device's last RSSI until discovery stops: a gateway listening for
    /// ownership restarts it every `searchRefreshInterval`, so a device it stopped hearing stops
    /// being bid for.
    @Test func listeningForOwnershipRestartsDiscoverySoStaleReadingsClear() {
        typealias Discovery = FleetStateMachineDiscoveryTests
        var fleet = Discovery.running()
        Discovery.settle(&fleet, after: .ownershipGate(enabled: true))
        let later = Self.t0.advanced(by: AdapterDiscovery.searchRefreshInterval)
        let refreshed = Discovery.settle(&fleet, after: .evaluate, now: later)
        #expect(refreshed.map(\.call.methodName).contains("StopDiscovery"), "\(refreshed)")
        #expect(refreshed.last?.call.methodName == "StartDiscovery", "\(refreshed)")
    }

    @Test func observationsSayWhatIsHeardAndLinkedWithTheGatewaysFreeSlots() {
        let (linked, heard, quiet) = (Fleet.strap, Fleet.watch, Fleet.band)
        var fleet = Fleet.running(Fleet.configuration(pinned: [linked, heard, quiet]))
        _ = fleet.handle(.device(linked, .deviceFound(adapter: Self.hci0), objects: [.init(adapter: Self.hci0, rssi: -55)]), now: Self.t0)
        _ = fleet.handle(.device(linked, .connected, objects: [.init(adapter: Self.hci0, connected: true)]), now: Self.t0)
        _ = fleet.handle(.ownershipGate(enabled: true), now: Self.t0)
        _ = fleet.handle(.device(heard, .deviceFound(adapter: Self.hci0), objects: [.init(adapter: Self.hci0, rssi: -70)]), now: Self.t0)
        _ = fleet.handle(.command(.disconnect(quiet)), now: Self.t0)
        let observations = fleet.ownershipObservations()
        // hci0 has 2 slots, one taken by the link: 1 free; the linked device counts its own.
        #expect(observations[linked] == OwnershipObservation(linked: true, bid: OwnershipBidInputs(rssi: -55, freeSlots: 2)))
        #expect(observations[heard] == OwnershipObservation(linked: false, bid: OwnershipBidInputs(rssi: -70, freeSlots: 1)))
        #expect(observations[quiet] == OwnershipObservation(linked: false, bid: nil), "held, observed: its owner keeps the claim")
        // Given and being linked: slots count links only (the ownership machine counts the
        // devices it owns that wait for a link, attempts among them).
        _ = fleet.handle(.ownershipDecided(heard, linkAllowed: true), now: Self.t0)
        _ = fleet.handle(.deviceOutput(.requestAttempt(heard)), now: Self.t0)
        _ = fleet.handle(.evaluate, now: Self.t0)
        #expect(fleet.devices[heard]?.link == .attempting(Self.hci0))
        #expect(fleet.ownershipObservations()[heard]?.bid?.freeSlots == 1)
        // bluetoothd clears the RSSI when discovery stops: no longer heard.
        _ = fleet.handle(.device(heard, nil, objects: [.init(adapter: Self.hci0)]), now: Self.t0)
        #expect(fleet.ownershipObservations()[heard] == OwnershipObservation(linked: false, bid: nil))
    }

    @Test func aDeviceHeardWhereNoSlotIsFreeIsNotBidFor() {
        let (first, second, third) = (Fleet.strap, Fleet.watch, Fleet.band)
        var fleet = Fleet.running(Fleet.configuration(pinned: [first, second, third]))
        for id in [first, second] {
            _ = fleet.handle(.device(id, .deviceFound(adapter: Self.hci0), objects: [.init(adapter: Self.hci0, rssi: -55)]), now: Self.t0)
            _ = fleet.handle(.device(id, .connected, objects: [.init(adapter: Self.hci0, connected: true)]), now: Self.t0)
        }
        _ = fleet.handle(.device(third, .deviceFound(adapter: Self.hci0), objects: [.init(adapter: Self.hci0, rssi: -50)]), now: Self.t0)
        let observations = fleet.ownershipObservations()
        #expect(observations[third] == OwnershipObservation(linked: false, bid: nil), "hci0's 2 slots are taken")
        #expect(observations[first]?.bid == OwnershipBidInputs(rssi: -55, freeSlots: 1), "a linked device counts its own slot")
    }

    @Test func theFeedSaysEachLinkChangeOnceAndEveryReadingAndGoingQuietOnceAfterTheGrace() {
        let strap = Fleet.strap
        var feed = OwnershipFeed()
        let reading = OwnershipBidInputs(rssi: -60, freeSlots: 3)
        func at(_ seconds: Double) -> MonotonicInstant { Self.t0.advanced(by: .milliseconds(Int64(seconds * 1000))) }
        #expect(feed.inputs(from: [strap: .init(linked: false, bid: nil)], now: at(0)).isEmpty)
        #expect(feed.appeared == [strap], "first seen")
        #expect(feed.inputs(from: [strap: .init(linked: false, bid: reading)], now: at(1)) == [.heard(strap, reading)])
        #expect(feed.appeared.isEmpty)
        #expect(feed.inputs(from: [strap: .init(linked: false, bid: reading)], now: at(2)) == [.heard(strap, reading)], "every reading")
        // A discovery restart clears the RSSI for a moment: nothing is said within the grace.
        #expect(feed.inputs(from: [strap: .init(linked: false, bid: nil)], now: at(3)).isEmpty)
        #expect(feed.inputs(from: [strap: .init(linked: false, bid: nil)], now: at(5.9)).isEmpty)
        #expect(feed.inputs(from: [strap: .init(linked: false, bid: reading)], now: at(6)) == [.heard(strap, reading)])
        // Quiet for the grace: said once.
        #expect(feed.inputs(from: [strap: .init(linked: false, bid: nil)], now: at(7)).isEmpty)
        #expect(feed.inputs(from: [strap: .init(linked: false, bid: nil)], now: at(10)) == [.notHeard(strap)])
        #expect(feed.inputs(from: [strap: .init(linked: false, bid: nil)], now: at(11)).isEmpty, "quiet is said once")
        #expect(feed.inputs(from: [strap: .init(linked: true, bid: reading)], now: at(12)) == [.linkChanged(strap, linked: true), .heard(strap, reading)])
        // A device that left the fleet is quiet at once; back, it has appeared again.
        #expect(feed.inputs(from: [:], now: at(13)) == [.linkChanged(strap, linked: false), .notHeard(strap)])
        _ = feed.inputs(from: [strap: .init(linked: false, bid: nil)], now: at(14))
        #expect(feed.appeared == [strap])
    }
}
