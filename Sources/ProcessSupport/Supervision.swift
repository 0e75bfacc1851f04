import Dispatch
import Glibc
import Subprocess
import Synchronization
import SystemPackage

/// One child's life as swift-subprocess reports it, shared by the task that runs the child (on
/// `ChildProcessExecutor`) and the `ChildProcess` callers that wait for its output or its exit.
///
/// swift-subprocess scopes a child to `run`'s closure and reaps it once the closure has returned.
/// That closure here reads the child's output, then stays open until a caller has seen the exit
/// (the reaping gate): until then the child is at most a zombie, so its pid cannot be reused, and
/// signals by pid are safe. Callers learn of the exit on their own thread (poll on a pidfd, then
/// `waitid(WNOWAIT)`), not from `run`'s result: `run` returns only after an unstructured task of
/// swift-subprocess's own ran on the Swift concurrency pool, and a caller blocked on that pool
/// (every test that stops a `PrivateBus` in a `defer`) would wait for itself. See NOTES.md.
final class Supervision: Sendable {
    enum StandardError: Sendable {
        case inherited
        /// Appended to a file: the descriptor is closed once the child has it.
        case file(FileDescriptor)
        /// Into the captured stdout.
        case merged
    }

    struct State {
        /// The child's pid and a pidfd of our own for it (-1 when the kernel offers none), once
        /// spawned.
        var started: (pid: pid_t, pidfd: Int32)?
        /// Why the child could not be started.
        var failure: String?
        /// Stdout read but not yet taken by a reader.
        var output: [UInt8] = []
        var outputEnded = false
        /// Exit code, or 128 + signal; -1 when the child was reaped behind our back.
        var exitCode: Int32?
        /// The closure given to `run`, waiting for `exitCode` before it returns (and the child is
        /// reaped).
        var gate: CheckedContinuation<Void, Never>?
        var waiters: [DispatchSemaphore] = []
    }

    private let state = Mutex(State())

    deinit {
        state.withLock { state in
            if let pidfd = state.started?.pidfd, pidfd >= 0 { close(pidfd) }
        }
    }

    // MARK: - Waiting (callers' threads)

    /// Waits until `ready` finds what it needs in the state (it may take it), or until
    /// `deadline` passes: nil then. No deadline waits for as long as it takes.
    func wait<Value: Sendable>(until deadline: DispatchTime?, _ ready: (inout State) -> Value?) -> Value? {
        while true {
            let changed = DispatchSemaphore(value: 0)
            let value: Value? = state.withLock { state in
                if let value = ready(&state) { return value }
                state.waiters.append(changed)
                return nil
            }
            if let value { return value }
            if let deadline {
                // A timed-out waiter stays listed: it is signalled once more, to no one.
                guard changed.wait(timeout: deadline) == .success else { return state.withLock { ready(&$0) } }
            } else {
                changed.wait()
            }
        }
    }

    /// The pid once the child runs, or why it could not be started.
    func started() -> Result<pid_t, SpawnFailure> {
        wait(until: nil) { state in
            if let started = state.started { return .success(started.pid) }
            return state.failure.map { .failure(SpawnFailure(reason: $0)) }
        } ?? .failure(SpawnFailure(reason: "no outcome"))
    }

    struct SpawnFailure: Error, CustomStringConvertible {
        let reason: String
        var description: String { reason }
    }

    /// The exit code once the child has exited, waiting until `deadline` (nil: for as long as it
    /// takes). Blocks the calling thread only, never waits for a task.
    func exitCode(waitingUntil deadline: DispatchTime?) -> Int32? {
        while true {
            let (started, known) = state.withLock { ($0.started, $0.exitCode) }
            if let known { return known }
            // Only a started child has an exit to wait for (`ChildProcess` exists only then).
            guard let started else { return -1 }
            if let code = Self.peekExit(of: started.pid) {
                publish(exitCode: code)
                continue
            }
            var timeout: Int32 = -1
            if let deadline {
                let now = DispatchTime.now()
                guard now < deadline else { return nil }
                timeout = Int32(min((deadline.uptimeNanoseconds - now.uptimeNanoseconds) / 1_000_000 + 1, 60_000))
            }
            if started.pidfd >= 0 {
                // A pidfd becomes readable when its process exits.
                var poller = pollfd(fd: started.pidfd, events: Int16(POLLIN), revents: 0)
                _ = poll(&poller, 1, timeout)
            } else {
                usleep(5_000)
            }
        }
    }

    /// The exit code of `pid` if it has exited, without reaping it (`WNOWAIT`): swift-subprocess
    /// reaps it once the gate opens. -1 if it is gone already.
    private static func peekExit(of pid: pid_t) -> Int32? {
        var info = siginfo_t()
        while waitid(P_PID, id_t(pid), &info, WEXITED | WNOHANG | WNOWAIT) != 0 {
            guard errno == EINTR else { return -1 }
        }
        guard info._sifields._sigchld.si_pid == pid else { return nil }  // still running
        let status = info._sifields._sigchld.si_status
        return info.si_code == CLD_EXITED ? status : 128 + status
    }

    /// Records the exit and opens the gate: `run`'s closure returns and swift-subprocess reaps.
    private func publish(exitCode code: Int32) {
        let (gate, waiters) = state.withLock { state in
            if state.exitCode == nil { state.exitCode = code }
            defer {
                state.gate = nil
                state.waiters.removeAll()
            }
            return (state.gate, state.waiters)
        }
        gate?.resume()
        for waiter in waiters { waiter.signal() }
    }

    /// Signals the child unless its exit is known. By pid, with the state locked: the child is
    /// not reaped before its exit is published, which takes the lock, so the pid is still its own.
    func send(_ signal: Int32) {
        state.withLock { state in
            guard state.exitCode == nil, let started = state.started else { return }
            kill(started.pid, signal)
        }
    }

    private func update(_ change: (inout State) -> Void) {
        let waiters = state.withLock { state in
            change(&state)
            defer { state.waiters.removeAll() }
            return state.waiters
        }
        for waiter in waiters { waiter.signal() }
    }

    // MARK: - Running (the supervising task)

    /// Spawns the child and follows it to its end. Never throws: every outcome ends up in the
    /// state.
    func run(_ configuration: Configuration, captureOutput: Bool, standardError: StandardError) async {
        // The output and error redirections are distinct types to swift-subprocess: one call each.
        switch (captureOutput, standardError) {
        case (true, .inherited):
            await follow(configuration, output: .sequence, error: .currentStandardError) { await collect($0.standardOutput) }
        case (true, .file(let file)):
            await follow(configuration, output: .sequence, error: .fileDescriptor(file, closeAfterSpawningProcess: true)) {
                await collect($0.standardOutput)
            }
        case (true, .merged):
            await follow(configuration, output: .sequence, error: .combinedWithOutput) { await collect($0.standardOutput) }
        case (false, .inherited):
            await follow(configuration, output: .currentStandardOutput, error: .currentStandardError) { _ in }
        case (false, .file(let file)):
            await follow(
                configuration, output: .currentStandardOutput, error: .fileDescriptor(file, closeAfterSpawningProcess: true)
            ) { _ in }
        case (false, .merged):
            await follow(configuration, output: .currentStandardOutput, error: .combinedWithOutput) { _ in }
        }
    }

    /// Runs the child: publishes its start, lets `read` consume its output, then keeps `run`'s
    /// closure open until a caller has seen the exit (see the type's comment).
    private func follow<Output: OutputProtocol, ErrorOutput: ErrorOutputProtocol>(
        _ configuration: Configuration, output: Output, error: ErrorOutput,
        read: (Execution<NoInput, Output, ErrorOutput>) async -> Void
    ) async {
        do {
            _ = try await Subprocess.run(configuration, input: .none, output: output, error: error) { execution in
                let child = execution.processIdentifier
                // Our own pidfd, still open after `run` closed its own: F_DUPFD_CLOEXEC, so no
                // child spawned meanwhile inherits it.
                let pidfd = child.processDescriptor >= 0 ? fcntl(child.processDescriptor, F_DUPFD_CLOEXEC, 0) : -1
                update { $0.started = (child.value, pidfd) }
                await read(execution)
                update { $0.outputEnded = true }
                await withCheckedContinuation { (gate: CheckedContinuation<Void, Never>) in
                    let open = state.withLock { state in
                        if state.exitCode != nil { return true }
                        state.gate = gate
                        return false
                    }
                    if open { gate.resume() }
                }
            }
        } catch {
            update {
                $0.failure = "\(error)"
                $0.outputEnded = true
            }
        }
    }

    /// Keeps the child's stdout until a reader takes it. The sequence ends at end of file or
    /// when the child exits (swift-subprocess then drains what is left in the pipe); a read error
    /// ends it too.
    private func collect(_ output: SubprocessOutputSequence) async {
        do {
            for try await buffer in output {
                let bytes = buffer.withUnsafeBytes { Array($0) }
                update { $0.output.append(contentsOf: bytes) }
            }
        } catch {
            // The output ends here; callers still see the exit.
        }
    }
}
