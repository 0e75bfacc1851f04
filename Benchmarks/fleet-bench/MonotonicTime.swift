import Glibc

/// CLOCK_MONOTONIC: the clock bluez-sim stamps its notifications with, the same in every
/// process of this machine.
enum MonotonicTime {
    static var seconds: Double {
        var now = timespec()
        clock_gettime(CLOCK_MONOTONIC, &now)
        return Double(now.tv_sec) + Double(now.tv_nsec) / 1e9
    }

    static var nanoseconds: UInt64 {
        var now = timespec()
        clock_gettime(CLOCK_MONOTONIC, &now)
        return UInt64(now.tv_sec) * 1_000_000_000 + UInt64(now.tv_nsec)
    }

    /// Sleeps the calling (driver) thread.
    static func sleep(_ seconds: Double) {
        guard seconds > 0 else { return }
        var request = timespec(tv_sec: Int(seconds), tv_nsec: Int((seconds - Double(Int(seconds))) * 1e9))
        var remaining = timespec()
        while nanosleep(&request, &remaining) != 0 && errno == EINTR { request = remaining }
    }
}

/// This process's user + system CPU in microseconds (every thread).
func processCPUMicroseconds() -> Int64 {
    var usage = rusage()
    getrusage(RUSAGE_SELF.rawValue, &usage)
    let seconds = Int64(usage.ru_utime.tv_sec + usage.ru_stime.tv_sec)
    return seconds * 1_000_000 + Int64(usage.ru_utime.tv_usec + usage.ru_stime.tv_usec)
}
