import FleetCore
import Testing

/// BlueZ keeps one `Device1` object per adapter that heard a device, and an unbonded device's
/// object on each adapter expires on its own `TemporaryTimeout`. Only the loss of the object a
/// link or attempt goes through, or of the last one, is news for the device's machine.
@Suite("FleetStateMachine: a device's objects on several adapters")
struct FleetStateMachineDuplicateObjectTests {
    static let hci0 = FleetStateMachineTests.hci0
    static let hci1 = FleetStateMachineTests.hci1
    static let strap = FleetStateMachineTests.strap
    static let t0 = FleetStateMachineTests.t0

    /// A running fleet with hci0 and hci1 powered and the strap heard by both.
    static func heardByBoth() -> FleetStateMachine {
        var fleet = FleetStateMachineTests.running(FleetStateMachineTests.configuration())
        _ = fleet.handle(.adapterChanged(hci1, powered: true), now: t0)
        _ = fleet.handle(.adapterPowerChanged(hci1, powered: true), now: t0)
        _ = fleet.handle(
            .device(strap, .deviceFound(adapter: hci0), objects: [.init(adapter: hci0, rssi: -50)]), now: t0)
        _ = fleet.handle(
            .device(strap, .deviceFound(adapter: hci1), objects: [.init(adapter: hci0, rssi: -50), .init(adapter: hci1, rssi: -58)]),
            now: t0)
        return fleet
    }

    static func deliveries(_ actions: [FleetStateMachine.Action]) -> [DeviceEvent] {
        FleetStateMachineTests.deliveries(actions, to: strap)
    }

    @Test func theOtherAdaptersDuplicateExpiringLeavesALiveLinkAlone() {
        var fleet = Self.heardByBoth()
        _ = fleet.handle(
            .device(Self.strap, .connected, objects: [.init(adapter: Self.hci0), .init(adapter: Self.hci1, connected: true)]),
            now: Self.t0)
        #expect(fleet.devices[Self.strap]?.link.adapter == Self.hci1)
        let expired = fleet.handle(.device(Self.strap, .deviceLost, objects: [.init(adapter: Self.hci1, connected: true)]), now: Self.t0)
        #expect(Self.deliveries(expired).isEmpty, "the device's machine hears nothing")
        #expect(!expired.contains(.dropNotifySockets(Self.strap)), "its notification sockets stay open")
        #expect(fleet.devices[Self.strap]?.link.adapter == Self.hci1)
        #expect(fleet.devices[Self.strap]?.objects.map(\.adapter) == [Self.hci1])
    }

    @Test func theLinkedAdaptersObjectGoingIsALostDevice() {
        var fleet = Self.heardByBoth()
        _ = fleet.handle(
            .device(Self.strap, .connected, objects: [.init(adapter: Self.hci0, connected: true), .init(adapter: Self.hci1)]),
            now: Self.t0)
        let removed = fleet.handle(.device(Self.strap, .deviceLost, objects: [.init(adapter: Self.hci1)]), now: Self.t0)
        #expect(Self.deliveries(removed) == [.deviceLost])
        #expect(removed.contains(.dropNotifySockets(Self.strap)))
        #expect(fleet.devices[Self.strap]?.link == .disconnected)
    }

    @Test func aDuplicateExpiringUnderAnAttemptOnTheOtherAdapterChangesNothing() {
        var fleet = Self.heardByBoth()
        _ = fleet.handle(.deviceOutput(.requestAttempt(Self.strap)), now: Self.t0)
        let granted = fleet.handle(.evaluate, now: Self.t0)
        guard case .attemptGranted(let adapter)? = Self.deliveries(granted).first else {
            Issue.record("no attempt granted: \(granted)")
            return
        }
        let other = adapter == Self.hci0 ? Self.hci1 : Self.hci0
        let expired = fleet.handle(.device(Self.strap, .deviceLost, objects: [.init(adapter: adapter)]), now: Self.t0)
        #expect(Self.deliveries(expired).isEmpty)
        #expect(fleet.devices[Self.strap]?.link == .attempting(adapter))
        #expect(fleet.devices[Self.strap]?.objects.map(\.adapter) == [adapter])
        #expect(fleet.devices[Self.strap]?.objects.contains { $0.adapter == other } == false)
    }

    @Test func anUnlinkedDeviceStillHeardOnOneAdapterIsNotLost() {
        var fleet = Self.heardByBoth()
        let expired = fleet.handle(.device(Self.strap, .deviceLost, objects: [.init(adapter: Self.hci1, rssi: -58)]), now: Self.t0)
        #expect(Self.deliveries(expired).isEmpty)
        // The last one going is.
        let gone = fleet.handle(.device(Self.strap, .deviceLost, objects: []), now: Self.t0)
        #expect(Self.deliveries(gone) == [.deviceLost])
    }

    @Test func aLinkBlueZMadeOnItsOwnIsAdoptedOnTheAdapterItLivesOn() {
        var fleet = Self.heardByBoth()
        // hci1's object was announced last, but the link came up through hci0's.
        let connected = fleet.handle(
            .device(Self.strap, .connected, objects: [.init(adapter: Self.hci0, connected: true), .init(adapter: Self.hci1)]),
            now: Self.t0)
        #expect(Self.deliveries(connected) == [.deviceFound(adapter: Self.hci0), .connected])
        #expect(fleet.devices[Self.strap]?.link.adapter == Self.hci0)
        // An attempt's own link needs no such hint: the machine knows its adapter.
        var attempted = Self.heardByBoth()
        _ = attempted.handle(.deviceOutput(.requestAttempt(Self.strap)), now: Self.t0)
        _ = attempted.handle(.evaluate, now: Self.t0)
        let adapter = attempted.devices[Self.strap]?.link.adapter
        let linked = attempted.handle(
            .device(Self.strap, .connected, objects: [.init(adapter: adapter ?? Self.hci0, connected: true)]), now: Self.t0)
        #expect(Self.deliveries(linked) == [.connected])
    }
}
