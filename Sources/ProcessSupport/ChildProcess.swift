import Dispatch
import Glibc
import Subprocess
import SystemPackage

/// A child process, started and watched by swift-subprocess: the daemon's tests and the
/// benchmarks run dbus-daemon, bluez-sim, wearfleetd and peers this way.
///
/// - The child starts with an empty signal mask and every handler at its default (swift-subprocess
///   resets all of them, in `posix_spawn` or in its forked child): threads of the Swift runtime
///   block most signals and a spawned child inherits the mask, so without the reset a dbus-daemon
///   ignores SIGTERM forever.
/// - It never inherits systemd's `NOTIFY_SOCKET`/`WATCHDOG_*` (a dbus-daemon would announce its
///   own READY=1 to whoever listens there), nor any descriptor but 0, 1 and 2: swift-subprocess
///   closes the rest in the child, and creates its pipes close-on-exec (`pipe2`), so a child
///   spawned by another thread at the same moment inherits none of them. Stdin is `/dev/null`.
/// - Stdout is read as it arrives and kept until read, so a child never blocks on a full pipe;
///   reading a line can be bounded by a deadline, and `terminate()` escalates to SIGKILL, so a
///   silent or stuck child ends a run instead of hanging it. Output ends at end of file or when
///   the child exits, even if a grandchild still holds the pipe.
/// - The child is reaped only after its exit was seen here, so `signal(_:)` never reaches a
///   process that reused its pid.
///
/// The calls below block their caller's thread (a reader waiting for a line, `terminate()`
/// waiting for the exit), but never wait for the Swift concurrency pool: the child's output is
/// read on a thread of its own (`ChildProcessExecutor`), and its exit is seen on the caller's
/// thread (`Supervision`), so they may be called from a task.
public final class ChildProcess: Sendable {
    public let pid: pid_t
    /// The executable's file name and first argument, for messages.
    public let name: String
    private let supervision: Supervision

    /// Starts `executable`. Stdout is captured when `captureOutput` is true (else inherited);
    /// stderr is inherited (so a failing child explains itself) unless `stderrPath` names a file to
    /// append to, or `mergeStderr` sends it into the captured output (for daemons that log to
    /// stderr). `notifySocket` is the one way to give a child a `NOTIFY_SOCKET`: for a caller that
    /// plays systemd's part (the benchmark times a daemon's `READY=1`). Returns once the child
    /// runs; throws when it cannot be started.
    public init(
        _ executable: String, _ arguments: [String], captureOutput: Bool = true, environment: [String: String]? = nil,
        stderrPath: String? = nil, mergeStderr: Bool = false, notifySocket: String? = nil
    ) throws {
        name = (executable.split(separator: "/").last.map(String.init) ?? executable)
            + (arguments.first.map { " " + $0 } ?? "")
        let standardError: Supervision.StandardError
        if let stderrPath {
            do {
                standardError = .file(
                    try FileDescriptor.open(
                        FilePath(stderrPath), .writeOnly, options: [.create, .append, .closeOnExec],
                        permissions: [.ownerReadWrite, .groupRead, .otherRead]))
            } catch {
                throw ChildProcessError.spawnFailed(executable, "cannot open \(stderrPath): \(error)")
            }
        } else {
            standardError = mergeStderr ? .merged : .inherited
        }
        let configuration = Configuration(
            executable: .path(FilePath(executable)), arguments: Arguments(arguments),
            environment: Self.environment(environment, notifySocket: notifySocket))
        let supervision = Supervision()
        Task(executorPreference: ChildProcessExecutor.shared) {
            await supervision.run(configuration, captureOutput: captureOutput, standardError: standardError)
        }
        switch supervision.started() {
        case .success(let pid): self.pid = pid
        case .failure(let failure): throw ChildProcessError.spawnFailed(executable, failure.reason)
        }
        self.supervision = supervision
    }

    /// `environment` (or ours) without systemd's notification variables; `NOTIFY_SOCKET` only when
    /// given.
    private static func environment(_ environment: [String: String]?, notifySocket: String?) -> Environment {
        let notification: [Environment.Key: String?] = [
            "NOTIFY_SOCKET": notifySocket, "WATCHDOG_USEC": nil, "WATCHDOG_PID": nil,
        ]
        guard let environment else { return Environment.inherit.updating(notification) }
        var custom: [Environment.Key: String] = [:]
        for (key, value) in environment {
            guard let key = Environment.Key(rawValue: key) else { continue }
            custom[key] = value
        }
        return Environment.custom(custom).updating(notification)
    }

    deinit {
        terminate()
    }

    // MARK: - Output

    /// The next line of stdout without its newline; nil at end of output. Blocks until then.
    public func readLine() -> String? {
        try? readLine(deadline: nil)
    }

    /// The next line of stdout; throws at end of output or when `seconds` pass without one.
    public func readLine(within seconds: Double) throws -> String {
        guard let line = try readLine(deadline: .now() + seconds) else {
            throw ChildProcessError.noOutput(name, "exited without the expected output")
        }
        return line
    }

    private func readLine(deadline: DispatchTime?) throws -> String? {
        let line: String?? = supervision.wait(until: deadline) { state in
            if let newline = state.output.firstIndex(of: UInt8(ascii: "\n")) {
                defer { state.output.removeSubrange(...newline) }
                return .some(String(decoding: state.output[..<newline], as: UTF8.self))
            }
            guard state.outputEnded else { return nil }
            // End of output: whatever is left is the last, unterminated line.
            if state.output.isEmpty { return .some(nil) }
            defer { state.output.removeAll() }
            return .some(String(decoding: state.output, as: UTF8.self))
        }
        guard let line else { throw ChildProcessError.noOutput(name, "no output in time") }
        return line
    }

    // MARK: - Ending

    /// Sends `signal` to the child unless it has exited.
    public func signal(_ signal: Int32) {
        supervision.send(signal)
    }

    /// Sends `signal` (SIGTERM by default), waits up to `grace` for the child to exit, then
    /// kills it. Returns the exit code (128 + signal when a signal ended it); idempotent.
    @discardableResult
    public func terminate(signal: Int32 = SIGTERM, grace: Double = 2) -> Int32 {
        if let code = supervision.exitCode(waitingUntil: .now()) { return code }
        supervision.send(signal)
        return finish(waitingUntil: .now() + grace)
    }

    /// Waits for the child to exit by itself; returns its exit code (or 128 + signal).
    public func waitForExit() -> Int32 {
        // Without a deadline the wait only ends with an exit code.
        supervision.exitCode(waitingUntil: nil) ?? -1
    }

    /// Waits up to `seconds` for the child to exit by itself, then kills it; true when it exited
    /// with status 0.
    @discardableResult
    public func finish(within seconds: Double) -> Bool {
        finish(waitingUntil: .now() + seconds) == 0
    }

    private func finish(waitingUntil deadline: DispatchTime) -> Int32 {
        if let code = supervision.exitCode(waitingUntil: deadline) { return code }
        supervision.send(SIGKILL)
        return waitForExit()
    }
}

extension ChildProcess {
    /// Runs a command to completion and returns its exit code and stdout.
    public static func run(_ executable: String, _ arguments: [String]) throws -> (status: Int32, output: String) {
        let child = try ChildProcess(executable, arguments)
        var lines: [String] = []
        while let line = child.readLine() { lines.append(line) }
        return (child.waitForExit(), lines.joined(separator: "\n"))
    }
}

public enum ChildProcessError: Error, CustomStringConvertible {
    case spawnFailed(String, String)
    case noOutput(String, String)

    public var description: String {
        switch self {
        case .spawnFailed(let executable, let reason): return "cannot start \(executable): \(reason)"
        case .noOutput(let name, let what): return "\(name): \(what)"
        }
    }
}
