import BlueZ
import BlueZSimulator
import Fleet
import FleetCore
import Testing
import TestSupport

/// A notify socket bluetoothd closes while the link stays up: the device must not stay ready
/// and silent.
@Suite("A notify socket that hangs up on a live link")
struct NotifyHangUpSimulatorTests {
    @Test func theDeviceIsDegradedThenSubscribesAgainAndValuesFlowAgain() async throws {
        let address = "C4:7A:10:00:70:01"
        let scenario = Scenario(
            seed: 71, adapters: [AdapterSpec(name: "hci0", slots: 5)],
            devices: [DeviceSpec(kind: .motionBand, address: address, addressType: "random", bonded: true, mtu: 247, notifyHz: 20)])
        let id = try FleetSimulatorFixture.id(address, random: true)
        var band = FleetSimulatorFixture.bandClass(fdPath: true)
        band.timeouts.recoveryInterval = .milliseconds(300)
        let configuration = FleetRuntimeConfiguration(
            pinned: [FleetRuntimeConfiguration.PinnedDevice(id: id, className: "band")], classes: ["band": band],
            pool: PoolConfiguration(maxConnections: 4))
        let fleet = try await FleetSimulatorFixture.start(scenario, configuration, seed: 71)
        try await fleet.waitForStatus("the band to be ready") { $0.pinnedReady == 1 }
        let sessions = try #require(await fleet.orchestrator.status().devices.first { $0.id == id }?.sessions)

        // Values from now on, as they arrive.
        let values = fleet.orchestrator.pipeline.values
        #expect(await fleet.simulator.closeNotifySockets(address: address) == 1)
        // The lost subscription is seen (the device is not left ready) …
        try await fleet.waitForStatus("the band to be degraded") {
            $0.devices.first { $0.id == id }?.state == .degraded(.subscriptionsIncomplete(missing: [FleetSimulatorFixture.bandData]))
        }
        // … and taken again on the same link: values flow again, and BlueZ shows the socket acquired.
        try await fleet.waitForStatus("the band to be ready again") { $0.pinnedReady == 1 }
        _ = try await values.first(within: .seconds(10), "a band sample after the hang-up") {
            $0.characteristic == FleetSimulatorFixture.bandData
        }
        let acquired = await fleet.client.waitForTree(timeout: .seconds(10)) { tree in
            guard let device = tree.devices(address: address).first(where: \.connected) else { return false }
            return tree.characteristics(of: device.path).first { $0.uuid == FleetSimulatorFixture.bandData }?.notifyAcquired == true
        }
        #expect(acquired)
        #expect(await fleet.orchestrator.status().devices.first { $0.id == id }?.sessions == sessions, "the link was never dropped")
        await fleet.stop()
    }
}
