import Foundation
import Glibc

/// What /proc says about another process: CPU time and resident memory. Used for the processes
/// that do not report for themselves (dbus-daemon, bluez-sim, wearfleetd).
enum ProcessSample {
    /// User + system CPU in microseconds (10 ms resolution: clock ticks), nil when gone.
    static func cpuMicroseconds(_ pid: pid_t) -> Double? {
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
