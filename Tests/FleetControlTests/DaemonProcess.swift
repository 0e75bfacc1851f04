import Foundation
import Synchronization
import TestSupport

/// A `wearfleetd` child process whose log lines (stderr, console format) arrive as a stream (read
/// on a thread of their own: `ChildProcess.outputLines()`).
final class DaemonProcess: Sendable {
    let child: ChildProcess
    let lines: AsyncStream<String>
    /// Every line read so far: log lines do not come in a fixed order (a device may be ready
    /// before the control interface is), so waits look at the whole log.
    private let seen = Mutex<[String]>([])

    /// Starts `wearfleetd` on the bus at `busAddress` with `files`' configuration and state
    /// directory, optionally through `launcher` (e.g. `setpriv …`), logging in the console format
    /// the waits read, its stderr merged into the captured stdout.
    init(bus busAddress: String, files: DaemonFiles, launcher: [String] = []) throws {
        let arguments = ["--bus", busAddress, "--config", files.config, "--state-dir", files.state, "--log-format", "console"]
        let command = launcher + [Commands.wearfleetd] + arguments
        child = try ChildProcess(command[0], Array(command.dropFirst()), mergeStderr: true)
        lines = child.outputLines()
    }

    /// Waits until the log so far has `count` lines containing `text` (within `timeout`) and
    /// returns them.
    @discardableResult
    func lines(containing text: String, count: Int = 1, within timeout: Duration = .seconds(60)) async throws -> [String] {
        if matches(text).count >= count { return matches(text) }
        _ = try await lines.first(within: timeout, "wearfleetd to log '\(text)' \(count) times") { line in
            self.keep(line)
            return self.matches(text).count >= count
        }
        return matches(text)
    }

    /// Every line read so far.
    var seenLines: [String] { seen.withLock { $0 } }

    private func keep(_ line: String) {
        seen.withLock { $0.append(line) }
    }

    private func matches(_ text: String) -> [String] {
        seen.withLock { $0.filter { $0.contains(text) } }
    }

    /// SIGTERM, then the exit code once the daemon has exited (SIGKILL after `timeout`). The
    /// lines it logs meanwhile are kept for `lines(containing:)`.
    ///
    /// Waits for the end of the output (the child's exit ends it) rather than for the exit
    /// itself, which would block a thread of the pool.
    func stop(within timeout: Duration = .seconds(15)) async -> Int32 {
        child.signal(SIGTERM)
        do {
            try await withTimeout(timeout, "wearfleetd to exit") { for await line in self.lines { self.keep(line) } }
        } catch {
            child.signal(SIGKILL)
            for await line in lines { keep(line) }
        }
        return child.waitForExit()
    }

    /// A test that failed before `stop()` must not leave a daemon behind.
    deinit {
        child.signal(SIGKILL)
    }
}

/// A scratch directory with a configuration file and a state directory for one daemon.
struct DaemonFiles {
    let directory: URL
    var config: String { directory.appendingPathComponent("wearfleetd.toml").path }
    var state: String { directory.appendingPathComponent("state").path }

    /// Pinned heart-rate straps at `addresses`, on hci0; `extra` is appended to the file.
    init(pinned addresses: [String], extra: String = "") throws {
        directory = FileManager.default.temporaryDirectory.appendingPathComponent("wearfleet-ctl-\(UUID().uuidString)")
        try FileManager.default.createDirectory(atPath: directory.appendingPathComponent("state").path, withIntermediateDirectories: true)
        var toml = "[fleet]\nadapters = [\"hci0\"]\n\n[classes.strap]\nsubscribe = [\"2A37\"]\nrequired_services = [\"180D\"]\n"
        for (index, address) in addresses.enumerated() {
            toml += "\n[[pinned]]\naddress = \"\(address)\"\nname = \"strap-\(index + 1)\"\nclass = \"strap\"\n"
        }
        // Daemons of parallel tests must not compete for the metrics port.
        toml += "\n[metrics]\nenabled = false\n" + extra
        try toml.write(toFile: config, atomically: true, encoding: .utf8)
    }

    /// A configuration of the test's own (`[metrics]` off is added).
    init(configuration body: String) throws {
        directory = FileManager.default.temporaryDirectory.appendingPathComponent("wearfleet-ctl-\(UUID().uuidString)")
        try FileManager.default.createDirectory(atPath: directory.appendingPathComponent("state").path, withIntermediateDirectories: true)
        try (body + "\n[metrics]\nenabled = false\n").write(toFile: config, atomically: true, encoding: .utf8)
    }

    func remove() { try? FileManager.default.removeItem(at: directory) }
}
