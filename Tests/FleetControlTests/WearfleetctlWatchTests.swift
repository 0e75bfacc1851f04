import BlueZSimulator
import FleetControl
import Foundation
import Testing
import TestSupport

/// `wearfleetctl watch` against the real daemon and the simulated bluetoothd on a private bus.
@Suite("wearfleetctl watch end to end")
struct WearfleetctlWatchTests {
    /// A `wearfleetctl watch` child whose output lines arrive as a stream (read on a thread of
    /// its own, like the daemon's log).
    final class WatchProcess: Sendable {
        let child: ChildProcess
        let lines: AsyncStream<String>

        init(_ arguments: [String]) throws {
            child = try ChildProcess(Commands.wearfleetctl, ["watch"] + arguments)
            lines = child.outputLines()
        }

        /// The next `count` lines.
        func next(_ count: Int, within timeout: Duration = .seconds(60)) async throws -> [String] {
            try await withTimeout(timeout, "\(count) lines from wearfleetctl watch") {
                var taken: [String] = []
                for await line in self.lines {
                    taken.append(line)
                    if taken.count == count { return taken }
                }
                return taken
            }
        }

        /// The exit code, once the output ended.
        func exit(within timeout: Duration = .seconds(15)) async throws -> Int32 {
            try await withTimeout(timeout, "wearfleetctl watch to exit") { for await _ in self.lines {} }
            return child.waitForExit()
        }
    }

    @Test func watchPrintsLiveValuesUntilInterruptedAndEndsWhenTheDaemonStops() async throws {
        let bus = try PrivateBus()
        let simulator = try await WearfleetdControlTests.simulator(on: bus)
        let files = try DaemonFiles(pinned: WearfleetdControlTests.straps)
        defer { files.remove() }
        let daemon = try DaemonProcess(bus: bus.address, files: files)
        try await daemon.lines(containing: "control interface ready")
        try await daemon.lines(containing: "→ ready", count: 2, within: .seconds(30))
        let strap = WearfleetdControlTests.straps[1]

        // JSON: one record per line, only the strap asked for.
        let json = try WatchProcess([strap, "--json", "--bus", bus.address])
        for line in try await json.next(3) {
            let record = try #require(try JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any])
            #expect(record["device"] as? String == strap)
            #expect(record["kind"] as? String == "heart_rate" || record["kind"] as? String == "battery", "\(line)")
        }
        json.child.signal(SIGINT)
        #expect(try await json.exit() == 0, "SIGINT ends the watch cleanly")

        // Text: time, address, name, kind, summary.
        let text = try WatchProcess(["--bus", bus.address])
        let line = try #require(try await text.next(1).first)
        #expect(line.contains("heart_rate  ") && line.contains(" bpm"), "\(line)")
        #expect(line.range(of: #"^\d\d:\d\d:\d\d\.\d\d\dZ  AA:BB:CC:00:00:0[12]  strap-[12]  "#, options: .regularExpression) != nil, "\(line)")
        // The daemon stopping ends the watch with the "not running" class of exit.
        #expect(await daemon.stop() == 0)
        #expect(try await text.exit() == 1)

        let badAddress = try await Commands.run(Commands.wearfleetctl, ["watch", "AA:BB", "--bus", bus.address])
        #expect(badAddress.status == 2)
        #expect(badAddress.errors.contains("invalid address 'AA:BB'"))
        await simulator.stop()
    }

    @Test func aFilterTheDaemonRefusesIsAUsageError() async throws {
        let bus = try PrivateBus()
        let simulator = try await WearfleetdControlTests.simulator(on: bus)
        let files = try DaemonFiles(pinned: [WearfleetdControlTests.straps[0]])
        defer { files.remove() }
        let daemon = try DaemonProcess(bus: bus.address, files: files)
        try await daemon.lines(containing: "control interface ready")
        let refused = try await Commands.run(Commands.wearfleetctl, ["watch", "--characteristic", "heart-rate", "--bus", bus.address])
        #expect(refused.status == 2)
        #expect(refused.errors.contains("wearfleetctl: invalid watch filter: Characteristics: 'heart-rate' is not a UUID"), "\(refused.errors)")
        #expect(await daemon.stop() == 0)
        await simulator.stop()
    }
}
