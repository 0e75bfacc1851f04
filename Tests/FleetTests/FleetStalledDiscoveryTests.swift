import BlueZSimulator
import Fleet
import FleetCore
import Testing
import TestSupport

/// The daemon against bluez-sim's `stall-discovery`: Linux 6.1 paused an adapter's scan for an
/// LE connection attempt and never resumed it, while bluetoothd 5.66 kept `Discovering` true
/// (NOTES.md, "The real stack"). Only a StopDiscovery and a new StartDiscovery scan again, which
/// the fleet's search refresh (`AdapterDiscovery.searchRefreshInterval`) does.
@Suite("The fleet against a stalled discovery")
struct FleetStalledDiscoveryTests {
    @Test("a pinned strap that comes into range while its adapter's discovery is stalled is found and connected after a search refresh")
    func strapFoundThroughTheSearchRefresh() async throws {
        let address = "AA:BB:CC:00:51:01"
        let scenario = Scenario(
            seed: 71, adapters: [AdapterSpec(name: "hci0", slots: 2)],
            devices: [DeviceSpec(kind: .heartRateStrap, address: address, addressType: "public", bonded: false, inRange: false)])
        let id = try FleetSimulatorFixture.id(address)
        // The resolve timeout (30 s by default) ends in a `gone` failure whose retry starts
        // discovery afresh too; beyond the wait below, only the refresh can find the strap.
        var strap = FleetSimulatorFixture.strapClass()
        strap.timeouts.resolve = .seconds(600)
        let configuration = FleetRuntimeConfiguration(
            pinned: [FleetRuntimeConfiguration.PinnedDevice(id: id, className: "strap")],
            classes: ["strap": strap], pool: PoolConfiguration(maxConnections: 2),
            reconnect: FleetStockBlueZSimulatorTests.fastReconnect())
        // Stalled before the daemon starts: its first discovery on hci0, whenever it begins, hears
        // nothing (stalling a running one here would race with the daemon's start).
        let fleet = try await FleetSimulatorFixture.start(scenario, configuration, seed: 71) { simulator, _ in
            try await simulator.apply(FaultCommand(.stallDiscovery, adapter: "hci0"))
        }
        try await fleet.simulator.apply(FaultCommand(.inRange, device: address))
        // The refresh comes 10 s after the search began; 60 s leave a loaded machine room and
        // still fail a daemon that never restarts its search.
        let status = try await fleet.waitForStatus("the strap ready after a search refresh", timeout: .seconds(60)) {
            $0.pinnedReady == 1
        }
        #expect(status.devices.first?.adapter == AdapterID("hci0"))
        #expect(status.devices.first?.lastFailure == nil, "found by a refresh, with no failure on the way")
        // The stall was in force while the strap advertised: the test did not pass by a scan
        // that heard it at once.
        let unreported = await fleet.simulator.counterSnapshot().advertisementsUnreported[address, default: 0]
        #expect(unreported > 0, "no advertisement of the strap went unreported: the stall never met it")
        await fleet.stop()
    }
}
