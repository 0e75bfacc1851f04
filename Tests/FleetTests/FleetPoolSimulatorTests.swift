import BlueZSimulator
import Fleet
import FleetCore
import GATT
import Testing
import TestSupport

/// The dynamic pool against the simulated bluetoothd: who gets the adapter's slots.
@Suite("The pool against the simulated bluetoothd")
struct FleetPoolSimulatorTests {
    static func strap(_ address: String, _ name: String) -> DeviceSpec {
        DeviceSpec(kind: .heartRateStrap, address: address, addressType: "public", name: name, bonded: true)
    }

    /// Pool devices named `prefix…` are eligible; `HRM-High…` outrank the rest.
    static func poolConfiguration(pinned: [FleetRuntimeConfiguration.PinnedDevice] = [], prefix: String) -> FleetRuntimeConfiguration {
        var pool = PoolSettings()
        pool.namePrefixes = [prefix]
        pool.defaultClass = "strap"
        pool.rules = [PoolRule(namePrefix: "HRM-High", priority: 50)]
        var configuration = FleetRuntimeConfiguration(
            pinned: pinned, classes: ["strap": FleetSimulatorFixture.strapClass()], poolClassName: "strap", poolEnabled: true,
            pool: PoolConfiguration(maxConnections: 8, defaultSlotsPerAdapter: 2, minimumDwell: .zero, scoreMargin: 1))
        configuration.poolAdmission = pool.admission(fleetMinimumRSSI: -100)
        return configuration
    }

    @Test func thePoolFillsTheSlotsWithTheHighestPriorityDevices() async throws {
        let scenario = Scenario(
            seed: 21, adapters: [AdapterSpec(name: "hci0", slots: 2)],
            devices: [
                Self.strap("AA:BB:CC:00:10:01", "HRM-Low 1"), Self.strap("AA:BB:CC:00:10:02", "HRM-High 1"),
                Self.strap("AA:BB:CC:00:10:03", "HRM-Low 2"), Self.strap("AA:BB:CC:00:10:04", "HRM-High 2"),
                Self.strap("AA:BB:CC:00:10:05", "Watch-Not-Eligible"),
            ])
        let fleet = try await FleetSimulatorFixture.start(scenario, Self.poolConfiguration(prefix: "HRM"))
        let high: Set<String> = ["AA:BB:CC:00:10:02", "AA:BB:CC:00:10:04"]
        let status = try await fleet.waitForStatus("both high-priority straps to be ready") { status in
            Set(status.devices.filter { $0.state == .ready }.map(\.id.address.description)) == high
        }
        #expect(status.adapters.first.map { $0.linksAndAttempts <= $0.slots } == true)
        #expect(!status.devices.contains { $0.id.address.description == "AA:BB:CC:00:10:05" }, "the watch is not eligible")
        let counters = await fleet.simulator.counterSnapshot()
        #expect(counters.maxConcurrentAttempts["hci0", default: 0] <= 1, "one connection attempt per adapter at a time")
        #expect(counters.connectAttempts.keys.allSatisfy { $0 != "AA:BB:CC:00:10:05" })
        await fleet.stop()
    }

    @Test func aPinnedDeviceEvictsAPoolDeviceWhenTheSlotsAreFull() async throws {
        let scenario = Scenario(
            seed: 22, adapters: [AdapterSpec(name: "hci0", slots: 2)],
            devices: [
                Self.strap("AA:BB:CC:00:20:01", "HRM-Pool 1"), Self.strap("AA:BB:CC:00:20:02", "HRM-Pool 2"),
                Self.strap("AA:BB:CC:00:20:03", "Pinned Strap"),
            ])
        var configuration = Self.poolConfiguration(prefix: "HRM-Pool")
        let fleet = try await FleetSimulatorFixture.start(scenario, configuration)
        try await fleet.waitForStatus("the pool to fill both slots") { $0.poolConnected == 2 }

        // Pinning the third strap (a reload) must take a slot from the pool.
        let pinned = try FleetSimulatorFixture.id("AA:BB:CC:00:20:03")
        configuration.pinned = [FleetRuntimeConfiguration.PinnedDevice(id: pinned, name: "pinned", className: "strap")]
        let summary = await fleet.orchestrator.reconfigure(configuration)
        #expect(summary.pinnedAdded == [pinned])
        let status = try await fleet.waitForStatus("the pinned strap to be ready with one pool device") { status in
            status.pinnedReady == 1 && status.poolConnected == 1
        }
        #expect(status.adapters.first.map { $0.linksAndAttempts <= 2 } == true)
        await fleet.stop()
    }
}
