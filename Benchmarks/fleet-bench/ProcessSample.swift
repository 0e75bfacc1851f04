import Foundation
import Glibc

/// What /proc says about another process: CPU time and resident memory. Used for the processes
/// that do not report for themselves (dbus-daemon, bluez-sim, wearfleetd).
enum ProcessSample {
    /// User + system CPU of all the process's threads in microseconds, nil when gone: from the
    /// process's CPU-time clock (nanoseconds, the scheduler's own runtime), or where that clock
    /// cannot be read, /proc's utime + stime (clock ticks: 10 ms, about a tenth of what one watch
    /// client adds to the daemon over a 5 s cell).
    static func cpuMicroseconds(_ pid: pid_t) -> Double? {
        var clock = clockid_t()
        var time = timespec()
        if clock_getcpuclockid(pid, &clock) == 0, clock_gettime(clock, &time) == 0 {
            return Double(time.tv_sec) * 1_000_000 + Double(time.tv_nsec) / 1000
        }
        guard let stat = try? String(contentsOfFile: "/proc/\(pid)/stat", encoding: .utf8),
            let afterName = stat.lastIndex(of: ")")
        else { return nil }
        // Fields after "(comm)": state is field 3; utime and stime are fields 14 and 15.
        let fields = stat[stat.index(after: afterName)...].split(separator: " ")
        guard fields.count > 12, let user = Double(fields[11]), let system = Double(fields[12]) else { return nil }
        return (user + system) * 1_000_000 / Double(sysconf(Int32(_SC_CLK_TCK)))
    }

    /// Resident set size in kilobytes (VmRSS), nil when gone.
    static func residentKilobytes(_ pid: pid_t) -> Int? {
        guard let status = try? String(contentsOfFile: "/proc/\(pid)/status", encoding: .utf8) else { return nil }
        for line in status.split(separator: "\n") where line.hasPrefix("VmRSS:") {
            return Int(line.split(separator: " ").dropFirst().first ?? "")
        }
        return nil
    }
}

/// CPU use of a process over a window, from /proc.
struct CPUWindow {
    let pid: pid_t
    private let startCPU: Double
    private let startTime: Double

    init(_ pid: pid_t) {
        self.pid = pid
        startCPU = ProcessSample.cpuMicroseconds(pid) ?? 0
        startTime = MonotonicTime.seconds
    }

    /// CPU microseconds used since the window began.
    var microseconds: Double { (ProcessSample.cpuMicroseconds(pid) ?? startCPU) - startCPU }
    var seconds: Double { MonotonicTime.seconds - startTime }
}
