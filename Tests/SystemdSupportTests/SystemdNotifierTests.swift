import Glibc
import Logging
import Testing
import TestSupport
@testable import SystemdSupport

/// `NOTIFY_SOCKET` and `WATCHDOG_*` are process-wide, so every test that sets them is in this one
/// serialized suite, and each restores what it changed.
@Suite(.serialized) struct SystemdNotifierTests {
    private func withEnvironment<T>(_ values: [String: String?], _ body: () async throws -> T) async throws -> T {
        let saved = values.keys.map { ($0, getenv($0).map { String(cString: $0) }) }
        for (name, value) in values {
            if let value { setenv(name, value, 1) } else { unsetenv(name) }
        }
        defer {
            for (name, value) in saved {
                if let value { setenv(name, value, 1) } else { unsetenv(name) }
            }
        }
        return try await body()
    }

    @Test func lifecycleMessagesReachTheNotifySocket() async throws {
        let socket = try DatagramSocket()
        try await withEnvironment(["NOTIFY_SOCKET": socket.path]) { () async throws in
            let notifier = SystemdNotifier()
            #expect(notifier.ready(status: "3/4 devices connected") == .sent)
            #expect(try await socket.receiveText() == "READY=1\nSTATUS=3/4 devices connected")
            #expect(notifier.status("4/4 devices connected\nall good") == .sent)
            #expect(try await socket.receiveText() == "STATUS=4/4 devices connected all good")
            #expect(notifier.stopping() == .sent)
            #expect(try await socket.receiveText() == "STOPPING=1")
            #expect(notifier.watchdog() == .sent)
            #expect(try await socket.receiveText() == "WATCHDOG=1")
        }
    }

    @Test func reloadingCarriesTheMonotonicClock() async throws {
        let socket = try DatagramSocket()
        try await withEnvironment(["NOTIFY_SOCKET": socket.path]) { () async throws in
            let before = SystemdNotifier.monotonicMicroseconds()
            #expect(SystemdNotifier().reloading() == .sent)
            let after = SystemdNotifier.monotonicMicroseconds()
            let lines = try await socket.receiveText().split(separator: "\n")
            #expect(lines.first == "RELOADING=1")
            let stamp = try #require(lines.first { $0.hasPrefix("MONOTONIC_USEC=") }.flatMap { UInt64($0.dropFirst(15)) })
            #expect(stamp >= before && stamp <= after)
        }
    }

    @Test func withoutNotifySocketEverythingIsANoOp() async throws {
        try await withEnvironment(["NOTIFY_SOCKET": nil]) { () async throws in
            #expect(SystemdNotifier().ready() == .notConfigured)
            #expect(SystemdNotifier().watchdog() == .notConfigured)
        }
    }

    @Test func aVanishedSocketIsReportedNotThrown() async throws {
        try await withEnvironment(["NOTIFY_SOCKET": "/nonexistent-wearfleet-dir/notify"]) { () async throws in
            let outcome = SystemdNotifier().ready()
            guard case .failed(let code) = outcome else {
                Issue.record("expected a failure, got \(outcome)")
                return
            }
            #expect(code == ENOENT)
        }
    }

    @Test func watchdogIntervalIsHalfOfWatchdogUSecForThisProcess() async throws {
        let pid = String(getpid())
        try await withEnvironment(["WATCHDOG_USEC": "20000000", "WATCHDOG_PID": pid]) { () async throws in
            #expect(SystemdNotifier().watchdogInterval == .seconds(10))
        }
        try await withEnvironment(["WATCHDOG_USEC": "3000000", "WATCHDOG_PID": nil]) { () async throws in
            #expect(SystemdNotifier().watchdogInterval == .milliseconds(1500))
        }
        try await withEnvironment(["WATCHDOG_USEC": "20000000", "WATCHDOG_PID": "1"]) { () async throws in
            #expect(SystemdNotifier().watchdogInterval == nil)
        }
        try await withEnvironment(["WATCHDOG_USEC": nil, "WATCHDOG_PID": nil]) { () async throws in
            #expect(SystemdNotifier().watchdogInterval == nil)
        }
    }

    @Test func watchdogConfigurationRejectsGarbage() {
        #expect(WatchdogConfiguration.interval(watchdogUSec: "0", watchdogPID: nil, ownPID: 5) == nil)
        #expect(WatchdogConfiguration.interval(watchdogUSec: "-5", watchdogPID: nil, ownPID: 5) == nil)
        #expect(WatchdogConfiguration.interval(watchdogUSec: "10s", watchdogPID: nil, ownPID: 5) == nil)
        #expect(WatchdogConfiguration.interval(watchdogUSec: "1000", watchdogPID: "x", ownPID: 5) == nil)
        #expect(WatchdogConfiguration.interval(watchdogUSec: "1000", watchdogPID: "5", ownPID: 5) == .microseconds(500))
    }

    // MARK: - Watchdog service

    private let logger = Logger(label: "watchdog-test") { _ in SwiftLogNoOpLogHandler() }

    @Test func aHealthyProbePingsOncePerBeat() async throws {
        let socket = try DatagramSocket()
        try await withEnvironment(["NOTIFY_SOCKET": socket.path]) { () async throws in
            let service = WatchdogService(interval: .seconds(1), logger: logger) { true }
            #expect(await service.beat() == .pinged)
            #expect(try await socket.receiveText() == "WATCHDOG=1")
            #expect(!socket.hasPending())
        }
    }

    @Test func anUnhealthyProbeDoesNotPing() async throws {
        let socket = try DatagramSocket()
        try await withEnvironment(["NOTIFY_SOCKET": socket.path]) { () async throws in
            let service = WatchdogService(interval: .seconds(1), logger: logger) { false }
            #expect(await service.beat() == .unhealthy)
            #expect(!socket.hasPending())
        }
    }

    @Test func aProbeThatHangsPastTheDeadlineDoesNotPing() async throws {
        let socket = try DatagramSocket()
        try await withEnvironment(["NOTIFY_SOCKET": socket.path]) { () async throws in
            // The probe stands for a wedged orchestrator: it answers only when cancelled.
            let service = WatchdogService(interval: .seconds(1), probeDeadline: .milliseconds(50), logger: logger) {
                try? await Task.sleep(for: .seconds(3600))
                return true
            }
            #expect(await service.beat() == .probeTimedOut)
            #expect(!socket.hasPending())
        }
    }

    @Test func runKeepsPingingWhileTheProbeAnswersAndStopsOnCancel() async throws {
        let socket = try DatagramSocket()
        try await withEnvironment(["NOTIFY_SOCKET": socket.path]) { () async throws in
            let service = WatchdogService(interval: .milliseconds(10), logger: logger) { true }
            let task = Task { await service.run() }
            for _ in 0..<3 { #expect(try await socket.receiveText() == "WATCHDOG=1") }
            task.cancel()
            try await withTimeout(.seconds(5), "the watchdog loop to end") { await task.value }
        }
    }
}
