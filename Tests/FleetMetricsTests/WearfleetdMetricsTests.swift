import BlueZSimulator
import FleetMetrics
import Foundation
import Testing
import TestSupport

/// The daemon as users run it (`wearfleetd --bus … --config …`) against the simulated bluetoothd:
/// it serves metrics, and when the metrics port is taken it says so and keeps the fleet going.
@Suite("wearfleetd and its metrics endpoint")
struct WearfleetdMetricsTests {
    static let address = "AA:BB:CC:00:00:21"

    /// The binary sits next to the test bundle in the build directory.
    static var binary: String {
        URL(fileURLWithPath: CommandLine.arguments[0]).deletingLastPathComponent().appendingPathComponent("wearfleetd").path
    }

    /// A daemon with one pinned strap and `[metrics] listen = listen`, on a fresh private bus with
    /// the simulator; its console log (stderr) is read as lines.
    struct Daemon {
        let bus: PrivateBus
        let simulator: BlueZSimulator
        let process: ChildProcess
        let directory: URL

        init(listen: String) async throws {
            bus = try PrivateBus()
            let scenario = Scenario(
                seed: 8, adapters: [AdapterSpec(name: "hci0", slots: 5)],
                devices: [DeviceSpec(kind: .heartRateStrap, address: WearfleetdMetricsTests.address, addressType: "public", bonded: true)])
            simulator = try BlueZSimulator(scenario: scenario, bus: .address(bus.address), timings: .fast)
            try await simulator.start()
            directory = FileManager.default.temporaryDirectory.appendingPathComponent("wearfleetd-metrics-\(UUID().uuidString)")
            try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
            let config = directory.appendingPathComponent("wearfleetd.toml")
            try """
                [[pinned]]
                address = "\(WearfleetdMetricsTests.address)"
                name = "strap"

                [metrics]
                listen = "\(listen)"
                """.write(to: config, atomically: true, encoding: .utf8)
            process = try ChildProcess(
                WearfleetdMetricsTests.binary,
                ["--bus", bus.address, "--config", config.path, "--state-dir", directory.appendingPathComponent("state").path,
                 "--log-format", "console"],
                mergeStderr: true)
        }

        /// Reads log lines until one contains `text`; returns every line read.
        func waitForLine(containing text: String, within seconds: Double = HTTPTestClient.patience) async throws -> [String] {
            let process = self.process
            return try await HTTPTestClient.onThread {
                var lines: [String] = []
                while true {
                    let line = try process.readLine(within: seconds)
                    lines.append(line)
                    if line.contains(text) { return lines }
                }
            }
        }

        /// SIGTERM, then the exit code; cleans up. The wait runs on a thread of its own: while the
        /// daemon stops it calls the simulator, which answers from this process's task pool.
        func stop() async throws -> Int32 {
            let process = self.process
            let status = try await HTTPTestClient.onThread { process.terminate(grace: 60) }
            await simulator.stop()
            bus.stop()
            try? FileManager.default.removeItem(at: directory)
            return status
        }
    }

    @Test func whenTheMetricsPortIsTakenTheDaemonSaysWhereAndKeepsTheFleetGoing() async throws {
        let holder = try MetricsEndpoint(host: "127.0.0.1", port: 0) { [] }
        defer { holder.stop() }
        let daemon = try await Daemon(listen: "127.0.0.1:\(holder.port)")
        let beforeReady = try await daemon.waitForLine(containing: "→ ready")
        let failure = beforeReady.filter { $0.contains("metrics endpoint not started") }
        #expect(failure.count == 1, "log so far:\n\(beforeReady.joined(separator: "\n"))")
        #expect(failure.first?.contains("127.0.0.1:\(holder.port)") == true)
        #expect(failure.first?.contains("Address already in use") == true)
        #expect(try await daemon.stop() == 0, "a clean exit on SIGTERM")
    }

    @Test func theDaemonServesItsFleetOnTheConfiguredAddress() async throws {
        // A free port, found by binding port 0 and letting go of it.
        let probe = try MetricsEndpoint(host: "127.0.0.1", port: 0) { [] }
        let port = probe.port
        probe.stop()
        let daemon = try await Daemon(listen: "127.0.0.1:\(port)")
        let lines = try await daemon.waitForLine(containing: "→ ready")
        #expect(lines.contains { $0.contains("serving metrics at http://127.0.0.1:\(port)/metrics") })
        let reply = try await HTTPTestClient.get("/metrics", port: port)
        #expect(reply.status == 200)
        let exposition = try Exposition(reply.body)
        #expect(exposition.value("wearfleet_pinned_ready_devices") == 1)
        #expect(exposition.value("wearfleet_device_state", ["address": Self.address, "name": "strap", "state": "ready"]) == 1)
        #expect(try await daemon.stop() == 0)
    }
}
