/// Reads systemd's watchdog settings (`WATCHDOG_USEC`, `WATCHDOG_PID`). Pure, for tests.
public enum WatchdogConfiguration {
    /// Half of `WATCHDOG_USEC` (systemd kills the service when a full period passes without a
    /// ping; pinging at half leaves room for one late ping), or nil when there is no watchdog for
    /// `ownPID`: the value is missing, not a positive integer, or `WATCHDOG_PID` is set to another
    /// process (the variables leak into children, which must not ping on our behalf).
    public static func interval(watchdogUSec: String?, watchdogPID: String?, ownPID: Int64) -> Duration? {
        guard let watchdogUSec, let microseconds = UInt64(watchdogUSec), microseconds > 0 else { return nil }
        if let watchdogPID {
            guard let pid = Int64(watchdogPID), pid == ownPID else { return nil }
        }
        return .microseconds(Int64(clamping: microseconds / 2))
    }
}
