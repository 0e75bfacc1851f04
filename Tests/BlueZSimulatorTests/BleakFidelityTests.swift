import BlueZSimulator
import DBus
import Foundation
import Testing
import TestSupport

@Suite("Fidelity: bleak drives bluez-sim", .enabled(if: FidelityEnvironment.shouldRun, "no .build-venv: run scripts/python-venv.sh"))
struct BleakFidelityTests {
    @Test("bluez-sim --devices 12: busctl sees the fleet; bleak scans, connects, reads, subscribes, writes and disconnects")
    func endToEnd() async throws {
        let python = try #require(FidelityEnvironment.python, "run scripts/python-venv.sh first")
        let bus = try PrivateBus()
        defer { bus.stop() }
        let simulator = try ChildProcess(
            FidelityEnvironment.simulatorBinary, ["--bus", bus.address, "--devices", "12", "--seed", "5", "--time-scale", "0.2"])
        defer { simulator.terminate() }
        let ready = try await withTimeout(.seconds(20), "bluez-sim to be ready") { simulator.readLine() ?? "" }
        #expect(ready.hasPrefix("ready :"))

        let tree = try ChildProcess("/usr/bin/busctl", ["--address=\(bus.address)", "tree", "--list", "org.bluez"])
        var treeLines: [String] = []
        while let line = tree.readLine() { treeLines.append(line) }
        #expect(tree.waitForExit() == 0)
        #expect(treeLines.filter { $0.hasPrefix("/org/bluez/hci0/dev_") }.count == 12)

        var environment = ProcessInfo.processInfo.environment
        environment["DBUS_SYSTEM_BUS_ADDRESS"] = bus.address
        environment["BLEAK_SCAN_SECONDS"] = "1.5"
        let script = FidelityEnvironment.packageRoot.appendingPathComponent("Tests/Fidelity/bleak_end_to_end.py").path
        let bleak = try ChildProcess(python, [script], environment: environment)
        let output = try await withTimeout(.seconds(60), "the bleak script") { bleak.readLine() ?? "" }
        #expect(bleak.waitForExit() == 0, "the bleak script failed; its stderr says why")
        let result = try JSONSerialization.jsonObject(with: Data(output.utf8)) as? [String: Any] ?? [:]
        #expect(result["devices_seen"] as? Int == 12)
        #expect(result["connected"] as? Bool == true)
        #expect((result["battery"] as? Int).map { (1...100).contains($0) } == true)
        #expect((result["heart_rates"] as? [Int])?.count == 3)
        #expect(result["disconnected"] as? Bool == true)
        #expect(result["control_reply"] as? [Int] == [0x83, 0, 50, 0, 87])
        #expect(result["max_write_without_response"] as? Int == 244)

        // What the simulator counted agrees with what bleak did.
        let client = try await DBusConnection.connect(to: .address(bus.address))
        let counters = try await client.call(
            destination: BlueZSimulator.controlName, path: BlueZSimulator.controlPath, interface: SimulatorControl.interfaceName,
            member: "GetCounters"
        ).decode([String: DBusValue].self, at: 0)
        #expect(counters["TotalWritesReceived"] == .uint64(1))
        if case .uint64(let sent)? = counters["TotalNotificationsSent"] { #expect(sent >= 4) } else { Issue.record("no notification count") }
        await client.close()
    }
}
