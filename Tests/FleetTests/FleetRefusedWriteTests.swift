import BlueZSimulator
import Fleet
import FleetCore
import Testing
import TestSupport

/// The daemon's write path against bluez-sim's `reject-writes`: bluetoothd 5.66 answers a write
/// request the peripheral refused with ATT error 0xfc as `org.bluez.Error.Failed` "Operation
/// failed with ATT error: 0xfc" (NOTES.md, "The real stack").
@Suite("The fleet's writes that the device refuses")
struct FleetRefusedWriteTests {
    @Test("a waited-for write the device refuses fails with bluetoothd's error, and the device stays ready on the same link")
    func refusedWriteKeepsTheDeviceReady() async throws {
        let address = "C4:7A:10:00:52:01"
        let (fleet, ids) = try await FleetDataPathSimulatorTests.bandFleet([address], fdPath: false, seed: 52)
        let before = try #require(await fleet.orchestrator.status().devices.first)
        try await fleet.simulator.apply(FaultCommand(.rejectWrites, device: address, uuid: FleetSimulatorFixture.bandControl))
        // The path the control interface's `Write` and `wearfleetctl write` take.
        do {
            let outcome = try await fleet.orchestrator.writeAndWait(
                ids[0], characteristic: FleetSimulatorFixture.bandControl, bytes: [0x03], mode: .withResponse)
            Issue.record("the refused write answered \(outcome)")
        } catch {
            guard case .failed(let device, let failure) = error else {
                Issue.record("expected a failed write, got \(error)")
                await fleet.stop()
                return
            }
            #expect(device == ids[0])
            #expect(failure.name == "org.bluez.Error.Failed")
            #expect(failure.message == "Operation failed with ATT error: 0xfc")
        }
        #expect(await fleet.simulator.counterSnapshot().writesRefused[address] == 1)
        let after = try #require(await fleet.orchestrator.status().devices.first)
        #expect(after.state == .ready)
        #expect(after.sessions == before.sessions, "the link was not touched")
        #expect(await fleet.orchestrator.writeStatus(ids[0]).counters.failed == 1)
        // Once the device takes writes again, the next one is acknowledged.
        try await fleet.simulator.apply(FaultCommand(.rejectWrites, device: address, uuid: ""))
        let outcome = try await fleet.orchestrator.writeAndWait(
            ids[0], characteristic: FleetSimulatorFixture.bandControl, bytes: [0x03], mode: .withResponse)
        #expect(outcome == .acknowledged)
        await fleet.stop()
    }
}
