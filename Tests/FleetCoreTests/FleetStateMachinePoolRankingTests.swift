import FleetCore
import GATT
import Testing

/// Pool devices take their class and priority from `[pool]`'s rules wherever they come from
/// (discovery, the state file) and whenever the rules change (a reload).
@Suite("FleetStateMachine pool ranking")
struct FleetStateMachinePoolRankingTests {
    typealias Fixture = FleetStateMachineTests
    static let watch = Fixture.watch
    static let band = Fixture.band
    static let heartRate = "0000180d-0000-1000-8000-00805f9b34fb"
    static let thermometer = "00001809-0000-1000-8000-00805f9b34fb"

    /// The pool on, with a rule giving heart-rate devices class "strap" and priority 5; others
    /// get the default class "pool".
    static func configuration(rules: [PoolRule]? = nil, poolEnabled: Bool = true) -> FleetRuntimeConfiguration {
        var configuration = Fixture.configuration(pinned: [Fixture.strap], pool: poolEnabled)
        configuration.classes["pool"] = DeviceStateMachine.Configuration()
        configuration.poolAdmission = PoolAdmission(
            minimumRSSI: -100, defaultClass: "pool", defaultPriority: 0,
            rules: rules ?? [PoolRule(service: BluetoothUUID(heartRate), priority: 5, className: "strap")])
        return configuration
    }

    static func restoredWatch() -> FleetStateMachine.RestoredDevice {
        FleetStateMachine.RestoredDevice(
            id: watch, membership: .pool, name: "Watch", servicesSeen: [heartRate], lastAdapter: Fixture.hci0, hasBeenReady: true)
    }

    static func replySummary(_ actions: [FleetStateMachine.Action]) -> FleetStateMachine.ReloadSummary? {
        for case .reply(.reloaded(let summary)) in actions { return summary }
        return nil
    }

    // MARK: - Restored pool devices

    @Test func aRestoredPoolDeviceTakesClassAndPriorityFromTheRuleItMatches() {
        var fleet = FleetStateMachine(configuration: Self.configuration(), now: Fixture.t0, seed: 1)
        _ = fleet.handle(.restore([Self.restoredWatch()]), now: Fixture.t0)
        let start = fleet.handle(.start, now: Fixture.t0)
        #expect(Fixture.created(start).contains(Self.watch))
        // Not the pool's default class "pool" and priority 0: the heart-rate rule's.
        #expect(fleet.devices[Self.watch]?.className == "strap")
        #expect(fleet.devices[Self.watch]?.priority == 5)
    }

    @Test func aRestoredPoolDeviceThePoolFiltersNoLongerAdmitIsNotCreated() {
        var configuration = Self.configuration()
        configuration.poolAdmission?.services = [BluetoothUUID(Self.thermometer)!]
        var fleet = FleetStateMachine(configuration: configuration, now: Fixture.t0, seed: 1)
        _ = fleet.handle(.restore([Self.restoredWatch()]), now: Fixture.t0)
        let start = fleet.handle(.start, now: Fixture.t0)
        #expect(Fixture.created(start) == [Fixture.strap])
    }

    // MARK: - Reload

    /// A running fleet with the watch as a connected pool device (found by discovery).
    static func fleetWithConnectedWatch(_ configuration: FleetRuntimeConfiguration) -> FleetStateMachine {
        var fleet = Fixture.running(configuration)
        let object = FleetStateMachine.DeviceObject(adapter: Fixture.hci0, name: "Watch", services: [heartRate], rssi: -50)
        _ = fleet.handle(.device(Self.watch, .deviceFound(adapter: Fixture.hci0), objects: [object]), now: Fixture.t0)
        var linked = object
        linked.connected = true
        _ = fleet.handle(.device(Self.watch, .connected, objects: [linked]), now: Fixture.t0)
        _ = fleet.handle(.evaluate, now: Fixture.t0)
        return fleet
    }

    @Test func aReloadTurningThePoolOffDisconnectsAndForgetsPoolDevices() {
        var fleet = Self.fleetWithConnectedWatch(Self.configuration())
        #expect(fleet.devices[Self.watch]?.link.adapter == Fixture.hci0)
        let actions = fleet.handle(.reload(Self.configuration(poolEnabled: false), objects: [:]), now: Fixture.t0)
        #expect(fleet.devices[Self.watch] == nil)
        #expect(actions.contains(.retireDevice(Self.watch, disconnect: true)))
        #expect(Fixture.deliveries(actions, to: Self.watch) == [.policyUpdated(wanted: false)])
        #expect(Self.replySummary(actions)?.poolReleased == [Self.watch])
        #expect(actions.contains(.publish(.deviceRemoved(Self.watch, reason: .notAdmitted))))
        // The pinned strap is untouched.
        #expect(fleet.devices[Fixture.strap] != nil)
        #expect(!actions.contains(.retireDevice(Fixture.strap, disconnect: true)))
        #expect(!actions.contains(.retireDevice(Fixture.strap, disconnect: false)))
    }

    @Test func aReloadReRanksConnectedPoolDevicesByTheNewRules() {
        var fleet = Self.fleetWithConnectedWatch(Self.configuration())
        #expect(fleet.devices[Self.watch]?.priority == 5)
        let rules = [PoolRule(namePrefix: "Watch", priority: 9, className: "pool")]
        let actions = fleet.handle(.reload(Self.configuration(rules: rules), objects: [:]), now: Fixture.t0)
        #expect(fleet.devices[Self.watch]?.priority == 9)
        #expect(fleet.devices[Self.watch]?.className == "pool")
        #expect(Self.replySummary(actions)?.poolReranked == [Self.watch])
        // Its link stays; its machine hears the new class's settings, and the pool is evaluated.
        #expect(fleet.devices[Self.watch]?.link.adapter == Fixture.hci0)
        #expect(actions.contains(.requestEvaluation))
        #expect(!actions.contains(.retireDevice(Self.watch, disconnect: true)))
    }

    @Test func aReloadRanksByTheServicesAPoolDeviceResolvedAfterItWasAdmitted() {
        // Admitted by name alone, before it showed any service.
        var fleet = Fixture.running(Self.configuration(rules: [PoolRule(namePrefix: "Watch", priority: 1, className: "pool")]))
        let bare = FleetStateMachine.DeviceObject(adapter: Fixture.hci0, name: "Watch", rssi: -50)
        _ = fleet.handle(.device(Self.watch, .deviceFound(adapter: Fixture.hci0), objects: [bare]), now: Fixture.t0)
        var resolved = bare
        resolved.services = [Self.heartRate]
        _ = fleet.handle(.device(Self.watch, nil, objects: [resolved]), now: Fixture.t0)
        _ = fleet.handle(.reload(Self.configuration(), objects: [:]), now: Fixture.t0)
        #expect(fleet.devices[Self.watch]?.className == "strap", "the heart-rate rule matches what it resolved")
        #expect(fleet.devices[Self.watch]?.priority == 5)
    }

    @Test func aReloadWhoseFiltersNoLongerAdmitAPoolDeviceReleasesIt() {
        var fleet = Self.fleetWithConnectedWatch(Self.configuration())
        var next = Self.configuration()
        next.poolAdmission?.namePrefixes = ["Band"]
        let actions = fleet.handle(.reload(next, objects: [:]), now: Fixture.t0)
        #expect(fleet.devices[Self.watch] == nil)
        #expect(actions.contains(.retireDevice(Self.watch, disconnect: true)))
        #expect(Self.replySummary(actions)?.poolReleased == [Self.watch])
    }

    @Test func aReloadThatChangesNothingForThePoolReportsNothing() {
        var fleet = Self.fleetWithConnectedWatch(Self.configuration())
        let actions = fleet.handle(.reload(Self.configuration(), objects: [:]), now: Fixture.t0)
        #expect(Self.replySummary(actions)?.poolReleased == [])
        #expect(Self.replySummary(actions)?.poolReranked == [])
        #expect(fleet.devices[Self.watch]?.priority == 5)
    }

    // MARK: - Candidates that leave

    @Test func aPoolCandidateWhoseLastObjectGoesIsForgottenWithItsSeries() {
        var fleet = Fixture.running(Self.configuration())
        let object = FleetStateMachine.DeviceObject(adapter: Fixture.hci0, name: "Watch", services: [Self.heartRate], rssi: -50)
        _ = fleet.handle(.device(Self.watch, .deviceFound(adapter: Fixture.hci0), objects: [object]), now: Fixture.t0)
        #expect(fleet.devices[Self.watch] != nil)
        // bluetoothd dropped its object (TemporaryTimeout): nothing is left of it in BlueZ.
        let lost = fleet.handle(.device(Self.watch, .deviceLost, objects: []), now: Fixture.t0)
        #expect(fleet.devices[Self.watch] == nil)
        #expect(lost.contains(.publish(.deviceRemoved(Self.watch, reason: .left))), "consumers (metrics) drop what they kept of it")
        #expect(lost.contains(.retireDevice(Self.watch, disconnect: false)))
        // Heard again, it is a candidate again.
        let again = fleet.handle(.device(Self.watch, .deviceFound(adapter: Fixture.hci0), objects: [object]), now: Fixture.t0)
        #expect(Fixture.created(again) == [Self.watch])
    }

    @Test func aPoolDeviceStillHeldOnAnotherAdapterAndAPinnedDeviceAreKept() {
        var fleet = Fixture.running(Self.configuration())
        let onHci0 = FleetStateMachine.DeviceObject(adapter: Fixture.hci0, name: "Watch", services: [Self.heartRate], rssi: -50)
        let onHci1 = FleetStateMachine.DeviceObject(adapter: Fixture.hci1, name: "Watch", services: [Self.heartRate], rssi: -70)
        _ = fleet.handle(.device(Self.watch, .deviceFound(adapter: Fixture.hci0), objects: [onHci0, onHci1]), now: Fixture.t0)
        _ = fleet.handle(.device(Self.watch, .deviceLost, objects: [onHci1]), now: Fixture.t0)
        #expect(fleet.devices[Self.watch] != nil, "hci1 still has it")
        _ = fleet.handle(.device(Fixture.strap, .deviceFound(adapter: Fixture.hci0), objects: [.init(adapter: Fixture.hci0)]), now: Fixture.t0)
        let lost = fleet.handle(.device(Fixture.strap, .deviceLost, objects: []), now: Fixture.t0)
        #expect(fleet.devices[Fixture.strap] != nil, "pinned devices are always managed")
        #expect(!lost.contains { if case .publish(.deviceRemoved) = $0 { true } else { false } })
    }
}
