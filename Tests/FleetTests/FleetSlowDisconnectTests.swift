import BlueZSimulator
import Fleet
import FleetCore
import Testing
import TestSupport

/// bluetoothd answers `Device1.Disconnect` only once the link is down, and a busy controller
/// makes that take seconds. Against the simulated bluetoothd with such a `Disconnect` (20 s), the
/// fleet goes on with everything else meanwhile.
@Suite("The fleet while a Disconnect takes 20 s")
struct FleetSlowDisconnectTests {
    static let strap = "AA:BB:CC:00:44:01"
    static let watch = "AA:BB:CC:00:44:02"

    @Test func anotherStrapsLinkLossIsHandledWhileADisconnectIsUnanswered() async throws {
        let scenario = Scenario(
            seed: 71, adapters: [AdapterSpec(name: "hci0", slots: 2)],
            devices: [Self.strap, Self.watch].map { DeviceSpec(kind: .heartRateStrap, address: $0, addressType: "public", bonded: true) })
        let strap = try FleetSimulatorFixture.id(Self.strap), watch = try FleetSimulatorFixture.id(Self.watch)
        @Sendable func configuration(_ pinned: [DeviceID]) -> FleetRuntimeConfiguration {
            FleetRuntimeConfiguration(
                pinned: pinned.map { FleetRuntimeConfiguration.PinnedDevice(id: $0, className: "strap") },
                classes: ["strap": FleetSimulatorFixture.strapClass()], pool: PoolConfiguration(maxConnections: 2),
                reconnect: FleetStockBlueZSimulatorTests.fastReconnect())
        }
        let fleet = try await FleetSimulatorFixture.start(scenario, configuration([strap, watch]), seed: 71)
        try await fleet.waitForStatus("both ready") { $0.pinnedReady == 2 }
        try await fleet.simulator.apply(FaultCommand(.disconnectDelay, device: Self.watch, seconds: 20))

        // Unpinning the watch disconnects it; its Disconnect takes 20 s to answer.
        let summary = try await withAbandoningTimeout(.seconds(60), "the reload") {
            await fleet.orchestrator.reconfigure(configuration([strap]))
        }
        #expect(summary.pinnedRemoved == [watch])
        try await withTimeout(.seconds(60), "the watch's Disconnect to be called") {
            while await fleet.simulator.counterSnapshot().disconnectsPending == 0 { try await Task.sleep(for: .milliseconds(10)) }
        }

        // The strap's link drops now: the fleet hears it while the Disconnect is unanswered.
        let changes = fleet.changes
        let dropped = ContinuousClock.now
        try await fleet.simulator.apply(FaultCommand(.dropLink, device: Self.strap))
        try await withAbandoningTimeout(.seconds(60), "the strap's link loss to be applied") {
            for await (device, state) in changes where device == strap && state != .ready { return }
        }
        let heard = ContinuousClock.now - dropped
        // (Two calls wait: the watch's machine releases its link as it is let go, and the
        // retirement disconnects it too, in case that call was cancelled with the machine.)
        #expect(await fleet.simulator.counterSnapshot().disconnectsPending >= 1, "heard before the Disconnect answered")
        try await fleet.waitForStatus("the strap ready again") { $0.devices.first { $0.id == strap }?.state == .ready }
        let ready = ContinuousClock.now - dropped
        // A figure for NOTES.md, not a check (no test asserts a duration).
        print("slow-disconnect: link loss applied after \(heard), ready again after \(ready), while a Disconnect waited 20 s")
        await fleet.stop()
    }
}
