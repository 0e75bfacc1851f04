import Foundation
import Testing
import TestSupport

/// A service that cannot start ends the daemon with its sysexits code, after the services
/// before it have stopped; no bluetoothd is needed to see it.
@Suite("wearfleetd exits with the failing service's code")
struct WearfleetdStartFailureTests {
    /// A scratch directory with a valid configuration (metrics off, so no port is needed).
    struct Scratch {
        let directory: URL
        var config: String { directory.appendingPathComponent("wearfleetd.toml").path }

        init() throws {
            directory = FileManager.default.temporaryDirectory.appendingPathComponent("wearfleetd-fail-\(UUID().uuidString)")
            try FileManager.default.createDirectory(at: directory.appendingPathComponent("state"), withIntermediateDirectories: true)
            try "[metrics]\nenabled = false\n".write(toFile: config, atomically: true, encoding: .utf8)
        }

        func remove() { try? FileManager.default.removeItem(at: directory) }
    }

    @Test func anUnusableStateDirectoryExits73BeforeTheBusIsTried() throws {
        let scratch = try Scratch()
        defer { scratch.remove() }
        // Under a regular file: the directory can never be made.
        let stateDirectory = scratch.directory.appendingPathComponent("wearfleetd.toml/state").path
        let result = try ChildProcess.run(
            WearfleetdCommandTests.binary,
            ["--config", scratch.config, "--state-dir", stateDirectory, "--bus", "unix:path=/nonexistent/bus", "--log-format", "json"])
        #expect(result.status == 73)
    }

    @Test func anUnreachableBusExits69AfterTheStateStoreStopped() throws {
        let scratch = try Scratch()
        defer { scratch.remove() }
        let state = scratch.directory.appendingPathComponent("state").path
        let child = try ChildProcess(
            WearfleetdCommandTests.binary,
            ["--config", scratch.config, "--state-dir", state, "--bus", "unix:path=/nonexistent/bus", "--log-format", "json"],
            mergeStderr: true)
        var events: [String] = []
        while let line = child.readLine() {
            let entry = (try? JSONSerialization.jsonObject(with: Data(line.utf8))) as? [String: Any]
            if let event = (entry?["metadata"] as? [String: Any])?["event"] as? String { events.append(event) }
        }
        #expect(child.waitForExit() == 69)
        // The state store had started: it was stopped (its final save) before the daemon exited.
        // Nothing was learned, so nothing was written, and the log says so.
        #expect(events.first == "state_loaded" && events.last == "state_unchanged", "\(events)")
        #expect(!events.contains("state_saved"), "\(events)")
    }
}
