import BlueZSimulator
import Fleet
import FleetCore
import Testing
import TestSupport

/// Faults the radio and bluetoothd inflict, and the fleet's way back to `ready`.
@Suite("Recovery against the simulated bluetoothd")
struct FleetRecoverySimulatorTests {
    static let address = "AA:BB:CC:00:30:01"

    static func start(seed: UInt64) async throws -> (FleetSimulatorFixture, DeviceID) {
        let scenario = Scenario(
            seed: seed, adapters: [AdapterSpec(name: "hci0", slots: 5)],
            devices: [DeviceSpec(kind: .heartRateStrap, address: address, addressType: "public", bonded: true)])
        let id = try FleetSimulatorFixture.id(address)
        var reconnect = ReconnectPolicy()
        reconnect.baseDelay = .milliseconds(100)
        reconnect.maxDelay = .milliseconds(400)
        let configuration = FleetRuntimeConfiguration(
            pinned: [FleetRuntimeConfiguration.PinnedDevice(id: id, className: "strap")],
            classes: ["strap": FleetSimulatorFixture.strapClass()], pool: PoolConfiguration(maxConnections: 4), reconnect: reconnect)
        let fleet = try await FleetSimulatorFixture.start(scenario, configuration, seed: seed)
        try await fleet.waitForStatus("the strap to be ready") { $0.pinnedReady == 1 }
        return (fleet, id)
    }

    @Test func aLostLinkBacksOffAndComesBackReady() async throws {
        let (fleet, id) = try await Self.start(seed: 31)
        let sessionBefore = try #require(await fleet.orchestrator.status().devices.first?.sessions)
        try await fleet.simulator.apply(FaultCommand(.dropLink, device: Self.address))
        let states = try await withTimeout(.seconds(20), "the strap to drop and be ready again") {
            var seen: [DeviceState] = []
            for await (device, state) in fleet.changes where device == id {
                seen.append(state)
                if state == .ready { return seen }
            }
            return seen
        }
        #expect(states.contains { if case .backingOff = $0 { true } else { false } }, "the reconnect went through backoff: \(states)")
        let status = await fleet.orchestrator.status()
        #expect(status.pinnedReady == 1)
        #expect((status.devices.first?.sessions ?? 0) > sessionBefore, "a new connection session")
        await fleet.stop()
    }

    @Test func anAdapterPowerCycleSuspendsAndRestoresTheDevice() async throws {
        let (fleet, id) = try await Self.start(seed: 32)
        try await fleet.simulator.apply(FaultCommand(.adapterPower, adapter: "hci0", powered: false))
        let suspended = try await fleet.changes.first(within: .seconds(10), "the strap to be suspended") {
            $0.0 == id && $0.1 == .suspended(.noPoweredAdapter)
        }
        #expect(suspended.1 == .suspended(.noPoweredAdapter))
        #expect(await fleet.orchestrator.status().adapters.first?.powered == false)
        // BlueZ reports the link's end without a reason, then the power-off: the journal names
        // the power-off as the cause (logged while the fleet applied it, before the suspension).
        let causes = fleet.log?.entries.filter { $0.event == "link_loss_cause" } ?? []
        #expect(causes.count == 1)
        #expect(causes.first?.metadata["cause"] == "adapter_powered_off")
        #expect(causes.first?.metadata["device_address"] == "\(Self.address)")
        // BlueZ said "on-disabling" before the link went: the loss burns no failure.
        #expect(await fleet.orchestrator.status().devices.first?.lastFailure == nil)
        #expect(fleet.log?.entries.contains { $0.event == "failed" } == false)
        try await fleet.simulator.apply(FaultCommand(.adapterPower, adapter: "hci0", powered: true))
        try await fleet.waitForStatus("the strap to be ready after power returns") { $0.pinnedReady == 1 }
        await fleet.stop()
    }
}
