import Foundation
import ProcessSupport

extension PrivateBus {
    /// CPU time (user + system) the daemon has used so far, in microseconds, from /proc.
    func cpuMicroseconds() -> Double {
        guard let stat = try? String(contentsOfFile: "/proc/\(pid)/stat", encoding: .utf8),
            let afterName = stat.lastIndex(of: ")")
        else { return 0 }
        // Fields after "(comm)": state is field 3; utime and stime are fields 14 and 15.
        let fields = stat[stat.index(after: afterName)...].split(separator: " ")
        guard fields.count > 12, let user = Double(fields[11]), let system = Double(fields[12]) else { return 0 }
        return (user + system) * 1_000_000 / Double(sysconf(Int32(_SC_CLK_TCK)))
    }
}
