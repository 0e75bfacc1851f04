import Foundation
import ProcessSupport

/// The real `wearfleetd` (release build) as a user runs it, with the benchmark in systemd's
/// place: it owns the notify socket (READY=1) and reads the JSON log.
final class DaemonProcess {
    let process: ChildProcess
    let log: DaemonLog
    let notify: NotifyListener
    /// When it was started (monotonic seconds).
    let startedAt: Double

    init(executable: String, bus: String, config: String, stateDirectory: String, directory: URL, name: String) throws {
        let logPath = directory.appendingPathComponent("\(name)-wearfleetd.log").path
        _ = FileManager.default.createFile(atPath: logPath, contents: nil)
        notify = try NotifyListener(path: directory.appendingPathComponent("\(name).notify").path)
        log = try DaemonLog(path: logPath)
        startedAt = MonotonicTime.seconds
        process = try ChildProcess(
            executable, ["--bus", bus, "--config", config, "--state-dir", stateDirectory, "--log-format", "json"],
            captureOutput: false, stderrPath: logPath, notifySocket: notify.path)
    }

    var pid: Int32 { process.pid }

    /// Seconds from start to READY=1.
    func waitForReady(within seconds: Double) throws -> Double {
        try notify.waitForReady(within: seconds) - startedAt
    }

    /// Monotonic time at which every one of `addresses` was ready.
    func waitUntilReady(_ addresses: [String], within seconds: Double) throws -> Double {
        try log.wait(within: seconds, "\(addresses.count) devices to be ready") { log.readyCount(of: addresses) == addresses.count }
    }

    /// Waits until the daemon is at rest: under 2 % CPU in two half-seconds running.
    func waitForRest(within seconds: Double, _ what: String) throws {
        let deadline = MonotonicTime.seconds + seconds
        var quiet = 0
        while quiet < 2 {
            guard MonotonicTime.seconds < deadline else { throw BenchError("\(what): the daemon never came to rest") }
            let window = CPUWindow(pid)
            MonotonicTime.sleep(0.5)
            quiet = window.microseconds < 0.02 * window.seconds * 1e6 ? quiet + 1 : 0
        }
    }

    func stop() {
        process.terminate(grace: 10)
    }
}
