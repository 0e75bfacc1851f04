import Foundation
import Glibc
import ProcessSupport
import Testing

/// What callers rely on `ChildProcess` for: what a child starts with, reading its output, ending it.
@Suite("Child processes")
struct ChildProcessTests {
    /// `name: value` lines of the child's /proc/self/status, as the child (`grep`) saw them.
    static func status(_ fields: [String]) throws -> [String: String] {
        let pattern = fields.map { "^\($0):" }.joined(separator: "|")
        let result = try ChildProcess.run("/bin/grep", ["-E", pattern, "/proc/self/status"])
        var values: [String: String] = [:]
        for line in result.output.split(separator: "\n") {
            let parts = line.split(separator: ":", maxSplits: 1)
            if parts.count == 2 { values[String(parts[0])] = parts[1].trimmingCharacters(in: .whitespaces) }
        }
        return values
    }

    @Test("A child starts with no signal blocked and the standard ones at their defaults")
    func signalMaskAndHandlersAreReset() throws {
        // Threads of the Swift runtime block most signals, and a child inherits its spawning
        // thread's mask: whatever that thread blocks (this one, when it starts the spawning
        // thread), the child must block and ignore nothing, or a dbus-daemon ignores SIGTERM.
        var blocked = sigset_t()
        sigemptyset(&blocked)
        sigaddset(&blocked, SIGTERM)
        var previous = sigset_t()
        pthread_sigmask(SIG_BLOCK, &blocked, &previous)
        defer { pthread_sigmask(SIG_SETMASK, &previous, nil) }
        let status = try Self.status(["SigBlk", "SigIgn"])
        #expect(status["SigBlk"] == "0000000000000000")
        // Signals 1–31 (SigIgn's low bits) at their defaults. 32 and 33 are glibc's own, left out of
        // sigfillset, so no spawn can reset them; they show as ignored here.
        let ignored = status["SigIgn"].flatMap { UInt64($0, radix: 16) }
        #expect(ignored.map { $0 & 0x7fff_ffff } == 0, "SigIgn \(status["SigIgn"] ?? "?")")
    }

    @Test("A child inherits stdin, stdout and stderr only, even a descriptor that is not close-on-exec")
    func onlyStandardDescriptorsAreInherited() throws {
        var fds: [Int32] = [-1, -1]
        #expect(pipe(&fds) == 0)  // deliberately without O_CLOEXEC
        defer { fds.forEach { close($0) } }
        // `ls` lists its own descriptors: 0–2 and the one it reads the directory with.
        let listed = try ChildProcess.run("/bin/ls", ["/proc/self/fd"]).output.split(separator: "\n").compactMap { Int32($0) }
        #expect(listed.filter { $0 > 2 }.count == 1, "inherited: \(listed)")
        #expect(!listed.contains(fds[0]) && !listed.contains(fds[1]))
    }

    @Test("systemd's notification variables reach a child only when given explicitly")
    func notifySocketOnlyWhenGiven() throws {
        let environment = ["PATH": "/usr/bin:/bin", "NOTIFY_SOCKET": "/run/x", "WATCHDOG_USEC": "1", "WATCHDOG_PID": "1", "KEPT": "yes"]
        let plain = try ChildProcess("/usr/bin/env", [], environment: environment)
        var lines: [String] = []
        while let line = plain.readLine() { lines.append(line) }
        #expect(plain.waitForExit() == 0)
        #expect(lines.sorted() == ["KEPT=yes", "PATH=/usr/bin:/bin"])

        let notified = try ChildProcess("/usr/bin/env", [], environment: environment, notifySocket: "/run/ours")
        lines = []
        while let line = notified.readLine() { lines.append(line) }
        #expect(lines.contains("NOTIFY_SOCKET=/run/ours"))
        #expect(!lines.contains { $0.hasPrefix("WATCHDOG_") })
    }

    @Test("Reads are bounded by a deadline; the last line may lack its newline; stderr can be merged")
    func readsAndExitCodes() throws {
        let quiet = try ChildProcess("/bin/sleep", ["30"])
        #expect(throws: ChildProcessError.self) { try quiet.readLine(within: 0.2) }
        #expect(quiet.terminate() == 128 + SIGTERM)

        let chatty = try ChildProcess("/bin/sh", ["-c", "echo one; echo two >&2; printf three; exit 3"], mergeStderr: true)
        #expect(try chatty.readLine(within: 10) == "one")
        #expect(try chatty.readLine(within: 10) == "two")
        #expect(try chatty.readLine(within: 10) == "three")
        #expect(chatty.readLine() == nil)
        #expect(chatty.waitForExit() == 3)
        #expect(chatty.terminate() == 3, "idempotent once exited")
    }

    @Test("terminate() escalates to SIGKILL when the child ignores the signal")
    func terminateEscalates() throws {
        let stubborn = try ChildProcess("/bin/sh", ["-c", "trap '' TERM; echo ready; while :; do sleep 1; done"])
        #expect(try stubborn.readLine(within: 10) == "ready")
        #expect(stubborn.terminate(grace: 0.3) == 128 + SIGKILL)
    }

    @Test("Output ends when the child exits, even while a grandchild keeps the pipe open")
    func outputEndsAtExit() throws {
        let parent = try ChildProcess("/bin/sh", ["-c", "sleep 5 & echo started"])
        #expect(try parent.readLine(within: 10) == "started")
        let start = Date()
        #expect(parent.readLine() == nil)
        #expect(Date().timeIntervalSince(start) < 4, "not at the grandchild's end")
        #expect(parent.waitForExit() == 0)
    }

    @Test("Waits blocking every thread of the task pool at once still see their children exit")
    func blockingWaitsDoNotNeedThePool() async throws {
        try await withThrowingTaskGroup(of: Int32.self) { group in
            for _ in 0..<8 {
                group.addTask {
                    let child = try ChildProcess("/bin/sh", ["-c", "echo up; sleep 30"])
                    _ = try child.readLine(within: 10)
                    return child.terminate()
                }
            }
            for try await code in group { #expect(code == 128 + SIGTERM) }
        }
    }
}
