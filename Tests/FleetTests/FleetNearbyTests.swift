import Fleet
import FleetCore
import Testing

/// `FleetNearbyDevice.list`: what the radio hears outside the fleet, one entry per device.
@Suite struct FleetNearbyTests {
    static let hci0 = AdapterID("hci0")
    static let hci1 = AdapterID("hci1")
    static let pinned = DeviceID(address: BluetoothAddress("C0:FF:EE:00:00:01")!)
    static let strap = DeviceID(address: BluetoothAddress("C0:FF:EE:00:00:02")!)
    static let tag = DeviceID(address: BluetoothAddress("C0:FF:EE:00:00:03")!, addressType: .random)
    static let quiet = DeviceID(address: BluetoothAddress("C0:FF:EE:00:00:04")!)
    static let heartRateService = "0000180d-0000-1000-8000-00805f9b34fb"

    static func fleet(pool: Bool) -> FleetStateMachine {
        var fleet = FleetStateMachine(
            configuration: FleetRuntimeConfiguration(
                pinned: [.init(id: pinned, className: "strap")], classes: ["strap": DeviceStateMachine.Configuration()],
                poolClassName: "strap", poolEnabled: pool, poolServiceFilter: [heartRateService],
                pool: PoolConfiguration(maxConnections: 4)),
            now: .zero, seed: 1)
        _ = fleet.handle(.start, now: .zero)
        return fleet
    }

    static let sightings = [
        FleetSighting(id: pinned, object: .init(adapter: hci0, name: "Pinned", rssi: -40), reportedAt: .zero),
        FleetSighting(id: strap, object: .init(adapter: hci0, name: "Strap", services: [heartRateService], rssi: -70), reportedAt: .zero),
        FleetSighting(
            id: strap, object: .init(adapter: hci1, services: [heartRateService], rssi: -55),
            reportedAt: MonotonicInstant.zero.advanced(by: .seconds(3))),
        FleetSighting(id: tag, object: .init(adapter: hci1, name: "Tag", rssi: -80), paired: true, reportedAt: .zero),
        FleetSighting(id: quiet, object: .init(adapter: hci0, name: "Remembered")),
    ]

    @Test func oneEntryPerDeviceOutsideTheFleetStrongestFirst() {
        let now = MonotonicInstant.zero.advanced(by: .seconds(10))
        let nearby = FleetNearbyDevice.list(Self.sightings, excluding: Self.fleet(pool: false), now: now)
        #expect(nearby.map(\.id) == [Self.strap, Self.tag, Self.quiet])
        let strap = nearby[0]
        // Both adapters' objects merged: the strongest RSSI, the latest hearing, the name one had.
        #expect(strap.rssi == -55 && strap.adapters == [Self.hci0, Self.hci1] && strap.name == "Strap")
        #expect(strap.lastReported == .seconds(7))
        #expect(nearby[1].paired && nearby[1].id.addressType == .random)
        #expect(nearby[2].lastReported == nil && nearby[2].rssi == nil, "remembered by bluetoothd, not heard since")
        #expect(nearby.allSatisfy { $0.poolClass == nil }, "the pool is off")
    }

    @Test func thePoolClassIsTheOneItsRulesWouldGive() {
        let nearby = FleetNearbyDevice.list(Self.sightings, excluding: Self.fleet(pool: true), now: .zero)
        #expect(nearby.first { $0.id == Self.strap }?.poolClass == "strap")
        #expect(nearby.first { $0.id == Self.tag }?.poolClass == nil, "no heart-rate service: the filter would not take it")
    }
}
