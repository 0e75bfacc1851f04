import Foundation

/// A child process started with `posix_spawn`, with its stdout on a pipe we read.
///
/// Foundation's `Process.waitUntilExit` spins a run loop that can hang inside Swift concurrency
/// tasks, so this uses `kill` and `waitpid` directly.
public final class ChildProcess: @unchecked Sendable {
    // @unchecked Sendable: `pid` and `stdout` are immutable; `exited` is guarded by `lock`.
    public let pid: pid_t
    /// The read end of the child's stdout (nil when stdout was not captured).
    public let stdout: FileHandle?
    private let lock = NSLock()
    private var exitStatus: Int32?

    /// Starts `executable` with `arguments`. Stdout is captured when `captureOutput` is true;
    /// stderr is inherited so a failing child explains itself in the test log.
    /// `stderrPath` sends the child's stderr to a file instead (for chatty children).
    public init(
        _ executable: String, _ arguments: [String], captureOutput: Bool = true, environment: [String: String]? = nil,
        stderrPath: String? = nil
    ) throws {
        var fileActions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&fileActions)
        defer { posix_spawn_file_actions_destroy(&fileActions) }
        // Threads of the Swift runtime block most signals, and a spawned child inherits the
        // mask: without resetting it, dbus-daemon would ignore our SIGTERM forever.
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
            // Close-on-exec, so children started in parallel do not inherit each other's pipes.
            guard pipe(&pipeFDs) == 0 else { throw ChildProcessError.spawnFailed(executable, errno) }
            for fd in pipeFDs { _ = fcntl(fd, F_SETFD, FD_CLOEXEC) }
            posix_spawn_file_actions_adddup2(&fileActions, pipeFDs[1], 1)
            posix_spawn_file_actions_addclose(&fileActions, pipeFDs[0])
            posix_spawn_file_actions_addclose(&fileActions, pipeFDs[1])
        }
        if let stderrPath {
            posix_spawn_file_actions_addopen(&fileActions, 2, stderrPath, O_WRONLY | O_CREAT | O_APPEND, 0o644)
        }
        let argv = ([executable] + arguments).map { strdup($0) } + [nil]
        defer { for arg in argv { free(arg) } }
        // systemd's notification variables are for this process only: a dbus-daemon that inherits
        // NOTIFY_SOCKET announces its own READY=1 to whoever listens there (a test, for one).
        let inherited = (environment ?? ProcessInfo.processInfo.environment).filter {
            !["NOTIFY_SOCKET", "WATCHDOG_USEC", "WATCHDOG_PID"].contains($0.key)
        }
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
        stdout = captureOutput ? FileHandle(fileDescriptor: pipeFDs[0], closeOnDealloc: true) : nil
    }

    /// Reads one line from the child's stdout (blocking), without the newline; nil at EOF.
    public func readLine() -> String? {
        guard let stdout else { return nil }
        var line = Data()
        while true {
            let byte = stdout.readData(ofLength: 1)
            if byte.isEmpty { return line.isEmpty ? nil : String(decoding: line, as: UTF8.self) }
            if byte.first == UInt8(ascii: "\n") { return String(decoding: line, as: UTF8.self) }
            line.append(byte)
        }
    }

    /// Sends `signal` (SIGTERM by default) and reaps the child.
    @discardableResult
    public func terminate(signal: Int32 = SIGTERM) -> Int32 {
        lock.lock()
        defer { lock.unlock() }
        if let exitStatus { return exitStatus }
        kill(pid, signal)
        var status: Int32 = 0
        while waitpid(pid, &status, 0) < 0 && errno == EINTR {}
        exitStatus = status
        return status
    }

    /// Waits for the child to exit by itself and returns its exit code (or 128 + signal).
    public func waitForExit() -> Int32 {
        lock.lock()
        defer { lock.unlock() }
        if let exitStatus { return Self.code(exitStatus) }
        var status: Int32 = 0
        while waitpid(pid, &status, 0) < 0 && errno == EINTR {}
        exitStatus = status
        return Self.code(status)
    }

    private static func code(_ status: Int32) -> Int32 {
        let signal = status & 0x7f
        return signal == 0 ? (status >> 8) & 0xff : 128 + signal
    }

    deinit { terminate() }
}

public enum ChildProcessError: Error, CustomStringConvertible {
    case spawnFailed(String, Int32)
    public var description: String {
        switch self {
        case .spawnFailed(let executable, let code): return "cannot start \(executable): error \(code)"
        }
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
