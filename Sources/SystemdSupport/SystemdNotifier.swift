import CSystemd
import Glibc

/// Tells the service manager about the daemon's lifecycle with `sd_notify(3)`: `READY=1`,
/// `STATUS=…`, `RELOADING=1`, `STOPPING=1`, `WATCHDOG=1`.
///
/// Guarantees: a value type with no state, safe from any task; every call is a no-op returning
/// `.notConfigured` when `NOTIFY_SOCKET` is unset (not run by systemd, or `Type=` is not `notify`);
/// a status text is always one line (a newline would let the text inject further assignments).
/// libsystemd reads `NOTIFY_SOCKET` on every call, so the environment is never cached here.
public struct SystemdNotifier: Sendable {
    /// What became of one notification.
    public enum Outcome: Equatable, Sendable {
        case sent
        /// No `NOTIFY_SOCKET`: nobody is listening, which is normal outside systemd.
        case notConfigured
        /// `sd_notify` failed with this errno (the socket vanished, permission, …).
        case failed(errno: Int32)
    }

    public init() {}

    /// Start-up finished: the daemon is serving. With `Type=notify`, `systemctl start` returns now.
    @discardableResult
    public func ready(status: String? = nil) -> Outcome {
        send(["READY=1"] + (status.map { ["STATUS=" + Self.oneLine($0)] } ?? []))
    }

    /// A one-line summary shown by `systemctl status` (e.g. `7/8 devices connected, 1 backing off`).
    @discardableResult
    public func status(_ text: String) -> Outcome {
        send(["STATUS=" + Self.oneLine(text)])
    }

    /// A reload has begun; call `ready()` when it has finished. `MONOTONIC_USEC` (CLOCK_MONOTONIC,
    /// µs) lets systemd ≥ 253 (`Type=notify-reload`) tell this reload from an earlier one.
    @discardableResult
    public func reloading(status: String? = nil) -> Outcome {
        send(["RELOADING=1", "MONOTONIC_USEC=\(Self.monotonicMicroseconds())"]
             + (status.map { ["STATUS=" + Self.oneLine($0)] } ?? []))
    }

    /// Shutdown has begun.
    @discardableResult
    public func stopping(status: String? = nil) -> Outcome {
        send(["STOPPING=1"] + (status.map { ["STATUS=" + Self.oneLine($0)] } ?? []))
    }

    /// Keep-alive for `WatchdogSec=`. Send only after checking the daemon is really alive (see
    /// `WatchdogService`), or the watchdog proves nothing.
    @discardableResult
    public func watchdog() -> Outcome {
        send(["WATCHDOG=1"])
    }

    /// Half of `WATCHDOG_USEC`, as `sd_watchdog_enabled(3)` recommends, or nil when no watchdog is
    /// configured for this process (unset, invalid, or `WATCHDOG_PID` names another process).
    public var watchdogInterval: Duration? {
        WatchdogConfiguration.interval(
            watchdogUSec: Self.environment("WATCHDOG_USEC"),
            watchdogPID: Self.environment("WATCHDOG_PID"),
            ownPID: Int64(getpid())
        )
    }

    // MARK: - Sending

    private func send(_ assignments: [String]) -> Outcome {
        let message = assignments.joined(separator: "\n")
        let result = sd_notify(0, message)
        if result > 0 { return .sent }
        if result == 0 { return .notConfigured }
        return .failed(errno: -result)
    }

    /// Newlines end an assignment in the protocol; collapse them so a status is one line.
    static func oneLine(_ text: String) -> String {
        String(text.map { $0.isNewline ? " " : $0 })
    }

    static func monotonicMicroseconds() -> UInt64 {
        var now = timespec()
        clock_gettime(CLOCK_MONOTONIC, &now)
        return UInt64(now.tv_sec) * 1_000_000 + UInt64(now.tv_nsec) / 1_000
    }

    private static func environment(_ name: String) -> String? {
        guard let value = getenv(name) else { return nil }
        return String(cString: value)
    }
}
