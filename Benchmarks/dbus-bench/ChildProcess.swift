import Glibc

// A deliberately small copy of the tests' spawn helper (Tests/Support/ChildProcess.swift): an
// executable target cannot use the test-support target without shipping it, and the bench needs
// one thing the tests do not, reading a line with a deadline, so that a silent child ends the
// run instead of hanging it.

/// A child process started with `posix_spawn`, its stdout on a pipe.
final class ChildProcess {
    let pid: pid_t
    let name: String
    private let output: Int32
    private var buffered: [UInt8] = []
    private var exited = false

    init(_ executable: String, _ arguments: [String]) throws {
        name = (executable.split(separator: "/").last.map(String.init) ?? executable) + " " + (arguments.first ?? "")
        var fileActions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&fileActions)
        defer { posix_spawn_file_actions_destroy(&fileActions) }
        // Threads of the Swift runtime block most signals and a spawned child inherits the mask:
        // without resetting it, dbus-daemon would ignore our SIGTERM forever.
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

        var fds: [Int32] = [-1, -1]
        // Close-on-exec, so children started one after another do not inherit each other's pipes.
        guard pipe(&fds) == 0 else { throw BenchError("pipe: errno \(errno)") }
        for fd in fds { _ = fcntl(fd, F_SETFD, FD_CLOEXEC) }
        posix_spawn_file_actions_adddup2(&fileActions, fds[1], 1)
        let argv = ([executable] + arguments).map { strdup($0) } + [nil]
        defer { for arg in argv { free(arg) } }
        var child: pid_t = 0
        let result = posix_spawn(&child, executable, &fileActions, &attributes, argv, environ)
        close(fds[1])
        guard result == 0 else {
            close(fds[0])
            throw BenchError("cannot start \(executable): error \(result)")
        }
        pid = child
        output = fds[0]
    }

    /// The next line the child prints, without its newline; throws at EOF or after `seconds`.
    func readLine(within seconds: Double) throws -> String {
        let deadline = Clock.now + seconds
        while true {
            if let newline = buffered.firstIndex(of: UInt8(ascii: "\n")) {
                let line = String(decoding: buffered[..<newline], as: UTF8.self)
                buffered.removeSubrange(...newline)
                return line
            }
            let left = deadline - Clock.now
            guard left > 0 else { throw BenchError("\(name): no output within \(seconds) s") }
            var fd = pollfd(fd: output, events: Int16(POLLIN), revents: 0)
            let ready = poll(&fd, 1, Int32(left * 1000) + 1)
            if ready < 0 && errno == EINTR { continue }
            guard ready > 0 else { continue }
            var chunk = [UInt8](repeating: 0, count: 4096)
            let count = read(output, &chunk, chunk.count)
            if count < 0 && errno == EINTR { continue }
            guard count > 0 else { throw BenchError("\(name) exited without the expected output") }
            buffered.append(contentsOf: chunk[..<count])
        }
    }

    /// Waits up to `seconds` for the child to exit by itself, then kills it; true when it exited
    /// with status 0.
    @discardableResult
    func finish(within seconds: Double) -> Bool {
        guard !exited else { return true }
        exited = true
        let deadline = Clock.now + seconds
        var status: Int32 = 0
        while Clock.now < deadline {
            let reaped = waitpid(pid, &status, WNOHANG)
            if reaped == pid { return status == 0 }
            if reaped < 0 && errno != EINTR { return false }
            usleep(10_000)
        }
        kill(pid, SIGKILL)
        while waitpid(pid, &status, 0) < 0 && errno == EINTR {}
        return false
    }

    /// SIGTERM, then SIGKILL if it is still there after two seconds.
    func terminate() {
        guard !exited else { return }
        kill(pid, SIGTERM)
        finish(within: 2)
    }

    deinit {
        terminate()
        close(output)
    }
}
