import Logging

/// Pings systemd's watchdog only while the daemon is demonstrably alive.
///
/// Each beat runs a liveness probe (e.g. `{ await orchestrator.heartbeat() }`: a round trip
/// through the orchestrator's input queue, so a wedged actor, a loop stuck on one input or a
/// starved executor stops the pings)
/// and sends `WATCHDOG=1` only if the probe returns `true` within `probeDeadline`. A bare timer
/// would keep pinging from a daemon whose real work has hung, and systemd would never restart it.
///
/// Guarantees: at most one ping per beat; no ping after a failed or late probe; `run()` returns
/// when its task is cancelled (graceful shutdown).
public struct WatchdogService: Sendable {
    /// What one beat did.
    public enum Beat: Equatable, Sendable {
        case pinged
        /// The probe answered `false`.
        case unhealthy
        /// The probe did not answer within the deadline.
        case probeTimedOut
        /// The probe passed but the ping could not be sent.
        case notSent(SystemdNotifier.Outcome)
    }

    public let interval: Duration
    public let probeDeadline: Duration
    private let notifier: SystemdNotifier
    private let probe: @Sendable () async -> Bool
    private let logger: Logger

    /// - Parameters:
    ///   - interval: time between beats; normally `notifier.watchdogInterval`. At least 1 ms (a
    ///     zero interval would spin).
    ///   - probeDeadline: how long a probe may take; defaults to half the interval, so a late
    ///     probe still leaves time for the next beat before systemd's deadline.
    public init(
        notifier: SystemdNotifier = SystemdNotifier(),
        interval: Duration,
        probeDeadline: Duration? = nil,
        logger: Logger,
        probe: @escaping @Sendable () async -> Bool
    ) {
        self.notifier = notifier
        self.interval = max(interval, .milliseconds(1))
        self.probeDeadline = probeDeadline ?? self.interval / 2
        self.probe = probe
        self.logger = logger
    }

    /// Beats every `interval` until cancelled. Beats keep a fixed cadence (a slow probe does not
    /// push the next beat later), so pings stay within systemd's deadline.
    public func run() async {
        let clock = ContinuousClock()
        var next = clock.now
        while !Task.isCancelled {
            _ = await beat()
            next = next.advanced(by: interval)
            // After a long stall, start again from now rather than firing a burst of catch-up beats.
            if next < clock.now { next = clock.now.advanced(by: interval) }
            do { try await Task.sleep(until: next, clock: clock) } catch { return }
        }
    }

    /// One probe and, if it passed in time, one ping.
    public func beat() async -> Beat {
        let answer = await Self.race(probe, deadline: probeDeadline)
        switch answer {
        case .some(true):
            let outcome = notifier.watchdog()
            switch outcome {
            case .sent: return .pinged
            case .notConfigured, .failed: return .notSent(outcome)
            }
        case .some(false):
            logger.warning("liveness probe failed; not pinging the watchdog", metadata: ["event": "watchdog_unhealthy"])
            return .unhealthy
        case .none:
            logger.warning(
                "liveness probe did not answer in time; not pinging the watchdog",
                metadata: ["event": "watchdog_probe_timeout", "deadline": "\(probeDeadline)"]
            )
            return .probeTimedOut
        }
    }

    /// The probe's answer, or nil if the deadline came first. The probe is cancelled then; the
    /// beat waits for it to finish, so a probe that ignores cancellation stops the beats, which is
    /// the right outcome for a daemon that has hung.
    private static func race(_ probe: @escaping @Sendable () async -> Bool, deadline: Duration) async -> Bool? {
        await withTaskGroup(of: Bool?.self) { group in
            group.addTask { await probe() }
            group.addTask {
                try? await Task.sleep(for: deadline)
                return nil
            }
            let first = await group.next() ?? nil
            group.cancelAll()
            return first
        }
    }
}
