import Foundation
import Glibc

/// A child process started with `posix_spawn`: the daemon's tests, the benchmarks and the demo
/// run dbus-daemon, bluez-sim and peers this way.
///
/// - The child starts with an empty signal mask and default handlers: threads of the Swift
///   runtime block most signals and a spawned child inherits the mask, so without the reset a
///   dbus-daemon ignores SIGTERM forever.
/// - It never inherits systemd's `NOTIFY_SOCKET`/`WATCHDOG_*` (a dbus-daemon would announce its
///   own READY=1 to whoever listens there), nor our other descriptors (all close-on-exec).
/// - Reading stdout can be bounded by a deadline, and `terminate()` escalates to SIGKILL, so a
///   silent or stuck child ends a run instead of hanging it.
///
/// `@unchecked Sendable`: `pid`, `name` and `output` are immutable; the read buffer and the exit
/// status are only touched with their locks held (`outputLock` for the buffer, `lock` for the status).
public final class ChildProcess: @unchecked Sendable {
    public let pid: pid_t
    /// The executable's file name and first argument, for messages.
    public let name: String
    private let output: Int32?
    /// Guards the exit status (terminate, wait). Reading has its own lock, so a reader blocked
    /// waiting for output never keeps another thread from ending the child.
    private let lock = NSLock()
    private let outputLock = NSLock()
    private var buffered: [UInt8] = []
    private var exitStatus: Int32?

    /// Starts `executable`. Stdout is captured when `captureOutput` is true; stderr is inherited
    /// (so a failing child explains itself) unless `stderrPath` names a file to append to, or
    /// `mergeStderr` sends it into the captured output (for daemons that log to stderr).
    /// `notifySocket` is the one way to give a child a `NOTIFY_SOCKET`: for a caller that plays
    /// systemd's part (the benchmark times a daemon's `READY=1`).
    public init(
        _ executable: String, _ arguments: [String], captureOutput: Bool = true, environment: [String: String]? = nil,
        stderrPath: String? = nil, mergeStderr: Bool = false, notifySocket: String? = nil
    ) throws {
        name = (executable.split(separator: "/").last.map(String.init) ?? executable)
            + (arguments.first.map { " " + $0 } ?? "")
        var fileActions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&fileActions)
        defer { posix_spawn_file_actions_destroy(&fileActions) }
        var attributes = posix_spawnattr_t()
        posix_spawnattr_init(&attributes)
        defer { posix_spawnattr_destroy(&attributes) }
        var emptyMask = sigset_t()
        sigemptyset(&emptyMask)
        posix_spawnattr_setsigmask(&attributes, &emptyMask)
        var defaultSignals = sigset_t()
        sigemptyset(&defaultSignals)
        for signal in [SIGTERM, SIGINT, SIGHUP, SIGPIPE, SIGCHLD] { sigaddset(&defaultSignals, signal) }
        posix_spawnattr_setsigdefault(&attributes, &defaultSignals)
        posix_spawnattr_setflags(&attributes, Int16(POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF))

        var pipeFDs: [Int32] = [-1, -1]
        if captureOutput {
            guard pipe(&pipeFDs) == 0 else { throw ChildProcessError.spawnFailed(executable, errno) }
            for fd in pipeFDs { _ = fcntl(fd, F_SETFD, FD_CLOEXEC) }
            posix_spawn_file_actions_adddup2(&fileActions, pipeFDs[1], 1)
            if mergeStderr { posix_spawn_file_actions_adddup2(&fileActions, pipeFDs[1], 2) }
        }
        if let stderrPath {
            posix_spawn_file_actions_addopen(&fileActions, 2, stderrPath, O_WRONLY | O_CREAT | O_APPEND, 0o644)
        }
        let argv = ([executable] + arguments).map { strdup($0) } + [nil]
        defer { for arg in argv { free(arg) } }
        var inherited = (environment ?? ProcessInfo.processInfo.environment).filter {
            !["NOTIFY_SOCKET", "WATCHDOG_USEC", "WATCHDOG_PID"].contains($0.key)
        }
        if let notifySocket { inherited["NOTIFY_SOCKET"] = notifySocket }
        let env = inherited.map { strdup("\($0.key)=\($0.value)") } + [nil]
        defer { for entry in env { free(entry) } }
        var child: pid_t = 0
        let result = posix_spawn(&child, executable, &fileActions, &attributes, argv, env)
        if captureOutput { close(pipeFDs[1]) }
        guard result == 0 else {
            if captureOutput { close(pipeFDs[0]) }
            throw ChildProcessError.spawnFailed(executable, result)
        }
        pid = child
        output = captureOutput ? pipeFDs[0] : nil
    }

    deinit {
        terminate()
        if let output { close(output) }
    }

    // MARK: - Output

    /// The next line of stdout without its newline; nil at end of file. Blocks until then.
    public func readLine() -> String? {
        try? readLine(deadline: nil)
    }

    /// The next line of stdout; throws at end of file or when `seconds` pass without one.
    public func readLine(within seconds: Double) throws -> String {
        guard let line = try readLine(deadline: monotonicSeconds() + seconds) else {
            throw ChildProcessError.noOutput(name, "exited without the expected output")
        }
        return line
    }

    private func readLine(deadline: Double?) throws -> String? {
        guard let output else { return nil }
        outputLock.lock()
        defer { outputLock.unlock() }
        while true {
            if let newline = buffered.firstIndex(of: UInt8(ascii: "\n")) {
                let line = String(decoding: buffered[..<newline], as: UTF8.self)
                buffered.removeSubrange(...newline)
                return line
            }
            var timeout: Int32 = -1
            if let deadline {
                let left = deadline - monotonicSeconds()
                guard left > 0 else { throw ChildProcessError.noOutput(name, "no output in time") }
                timeout = Int32(left * 1000) + 1
            }
            var poller = pollfd(fd: output, events: Int16(POLLIN), revents: 0)
            let ready = poll(&poller, 1, timeout)
            if ready < 0 && errno == EINTR { continue }
            guard ready > 0 else { continue }
            var chunk = [UInt8](repeating: 0, count: 4096)
            let count = read(output, &chunk, chunk.count)
            if count < 0 && errno == EINTR { continue }
            guard count > 0 else {
                // End of file: whatever is left is the last, unterminated line.
                if buffered.isEmpty { return nil }
                defer { buffered.removeAll() }
                return String(decoding: buffered, as: UTF8.self)
            }
            buffered.append(contentsOf: chunk[..<count])
        }
    }

    // MARK: - Ending

    /// Sends `signal` (SIGTERM by default), waits up to `grace` for the child to exit, then
    /// kills it. Returns the raw wait status; idempotent.
    @discardableResult
    public func terminate(signal: Int32 = SIGTERM, grace: Double = 2) -> Int32 {
        lock.lock()
        defer { lock.unlock() }
        if let exitStatus { return exitStatus }
        kill(pid, signal)
        let status = reap(within: grace) ?? killAndReap()
        exitStatus = status
        return status
    }

    /// Waits for the child to exit by itself; returns its exit code (or 128 + signal).
    public func waitForExit() -> Int32 {
        lock.lock()
        defer { lock.unlock() }
        if let exitStatus { return Self.code(exitStatus) }
        var status: Int32 = 0
        while waitpid(pid, &status, 0) < 0 && errno == EINTR {}
        exitStatus = status
        return Self.code(status)
    }

    /// Waits up to `seconds` for the child to exit by itself, then kills it; true when it exited
    /// with status 0.
    @discardableResult
    public func finish(within seconds: Double) -> Bool {
        lock.lock()
        defer { lock.unlock() }
        if let exitStatus { return exitStatus == 0 }
        let status = reap(within: seconds) ?? killAndReap()
        exitStatus = status
        return status == 0
    }

    private func reap(within seconds: Double) -> Int32? {
        let deadline = monotonicSeconds() + seconds
        var status: Int32 = 0
        while monotonicSeconds() < deadline {
            let reaped = waitpid(pid, &status, WNOHANG)
            if reaped == pid { return status }
            if reaped < 0 && errno != EINTR { return status }
            usleep(5_000)
        }
        return nil
    }

    private func killAndReap() -> Int32 {
        kill(pid, SIGKILL)
        var status: Int32 = 0
        while waitpid(pid, &status, 0) < 0 && errno == EINTR {}
        return status
    }

    private static func code(_ status: Int32) -> Int32 {
        let signal = status & 0x7f
        return signal == 0 ? (status >> 8) & 0xff : 128 + signal
    }

    private func monotonicSeconds() -> Double {
        var now = timespec()
        clock_gettime(CLOCK_MONOTONIC, &now)
        return Double(now.tv_sec) + Double(now.tv_nsec) / 1e9
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
    case spawnFailed(String, Int32)
    case noOutput(String, String)

    public var description: String {
        switch self {
        case .spawnFailed(let executable, let code): return "cannot start \(executable): error \(code)"
        case .noOutput(let name, let what): return "\(name): \(what)"
        }
    }
}
