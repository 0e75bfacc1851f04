import BlueZSimulator
import DBus
import FleetControl
import Foundation
import Testing
import TestSupport

/// The real daemon, the simulated bluetoothd and `wearfleetctl` on one private bus.
@Suite("wearfleetd's control interface end to end")
struct WearfleetdControlTests {
    static let straps = ["AA:BB:CC:00:00:01", "AA:BB:CC:00:00:02"]

    static func simulator(on bus: PrivateBus) async throws -> BlueZSimulator {
        let scenario = Scenario(
            seed: 5, adapters: [AdapterSpec(name: "hci0", slots: 5)],
            devices: straps.map { DeviceSpec(kind: .heartRateStrap, address: $0, addressType: "public", bonded: true) })
        let simulator = try BlueZSimulator(scenario: scenario, bus: .address(bus.address), timings: .fast)
        try await simulator.start()
        return simulator
    }

    @Test func wearfleetctlShowsTheRunningFleetAndNotRunningAfterStop() async throws {
        let bus = try PrivateBus()
        let simulator = try await Self.simulator(on: bus)
        let files = try DaemonFiles(pinned: Self.straps)
        defer { files.remove() }
        let daemon = try DaemonProcess(bus: bus.address, files: files)
        try await daemon.lines(containing: "control interface ready")
        // Both straps ready, as the daemon logs it; then the control interface must agree.
        try await daemon.lines(containing: "→ ready", count: 2, within: .seconds(30))

        let status = try await Commands.run(Commands.wearfleetctl, ["status", "--bus", bus.address])
        #expect(status.status == 0)
        let lines = status.output.split(separator: "\n", omittingEmptySubsequences: false).map(String.init)
        #expect(lines.first?.hasPrefix("wearfleetd \(WearfleetVersion.current): 2/2 pinned ready, 0 pool, hci0 2/5 slots") == true)
        #expect(lines.dropFirst().first?.hasPrefix("adapters: hci0 on, 2/5 slots") == true)
        #expect(lines.filter { $0.contains("pinned  ready") }.count == 2)

        let device = try await Commands.run(Commands.wearfleetctl, ["device", Self.straps[0], "--json", "--bus", bus.address])
        #expect(device.status == 0)
        let json = try #require(try JSONSerialization.jsonObject(with: Data(device.output.utf8)) as? [String: Any])
        #expect(json["state"] as? String == "ready")
        #expect(json["name"] as? String == "strap-1")
        #expect(json["adapter"] as? String == "hci0")
        #expect((json["sessions"] as? Int ?? 0) >= 1)

        #expect(await daemon.stop() == 0)
        let after = try await Commands.run(Commands.wearfleetctl, ["status", "--bus", bus.address])
        #expect(after.status == 1)
        #expect(after.errors.contains("wearfleetd is not running on \(bus.address)"))
        await simulator.stop()
    }

    @Test func withTheNameTakenTheDaemonSaysWhyAndRunsTheFleetAnyway() async throws {
        let bus = try PrivateBus()
        let squatter = try await DBusConnection.connect(to: .address(bus.address), threadName: "squatter")
        #expect(try await squatter.requestName(WearfleetControl.busName) == .primaryOwner)
        let simulator = try await Self.simulator(on: bus)
        let files = try DaemonFiles(pinned: [Self.straps[0]])
        defer { files.remove() }
        let daemon = try DaemonProcess(bus: bus.address, files: files)
        let complaint = try #require(try await daemon.lines(containing: "control interface unavailable").first)
        #expect(complaint.contains("error"))
        #expect(complaint.contains("already owned by \(squatter.uniqueName)"))
        try await daemon.lines(containing: "→ ready", within: .seconds(30))
        #expect(await daemon.stop() == 0)
        await squatter.close()
        await simulator.stop()
    }
}
