import Foundation
import Glibc
import ProcessSupport

/// What a receiver (wearfleetd's agent, the C floor, bleak) saw in one measurement window: each
/// prints exactly these fields as one JSON line when it gets SIGUSR1, then starts a new window.
struct WindowReport: Codable, Sendable {
    /// Notifications received and decoded in the window.
    var count: Int64
    /// Wall-clock length of the window, measured by the receiver.
    var seconds: Double
    /// The receiver's own CPU time (getrusage: every thread) in the window.
    var cpuMicroseconds: Int64
    /// Latency from the simulator's send timestamp to the decoded value, in microseconds.
    var p50Microseconds: Int64
    var p99Microseconds: Int64
    /// How many latencies the percentiles come from.
    var samples: Int64

    enum CodingKeys: String, CodingKey {
        case count, seconds, samples
        case cpuMicroseconds = "cpu_us"
        case p50Microseconds = "p50_us"
        case p99Microseconds = "p99_us"
    }

    var perSecond: Double { seconds > 0 ? Double(count) / seconds : 0 }
    /// CPU microseconds per notification.
    var cpuEach: Double { count > 0 ? Double(cpuMicroseconds) / Double(count) : .nan }
    /// Notifications per CPU-second.
    var perCPUSecond: Double { cpuMicroseconds > 0 ? Double(count) * 1e6 / Double(cpuMicroseconds) : .nan }
}

/// A receiver running in its own process that reports windows on SIGUSR1.
struct ReportingReceiver {
    let name: String
    let process: ChildProcess

    /// Ends the current window and returns its report (lines that are not JSON are skipped).
    func report(within seconds: Double = 15) throws -> WindowReport {
        process.signal(SIGUSR1)
        let deadline = MonotonicTime.seconds + seconds
        while true {
            let left = deadline - MonotonicTime.seconds
            guard left > 0 else { throw BenchError("\(name) did not report within \(Int(seconds)) s") }
            let line = try process.readLine(within: left)
            guard line.hasPrefix("{") else { continue }
            do {
                return try JSONDecoder().decode(WindowReport.self, from: Data(line.utf8))
            } catch {
                throw BenchError("\(name) printed an unreadable report: \(line)")
            }
        }
    }

    /// Reads lines until one starts with `prefix`; returns the rest of it.
    func expect(_ prefix: String, within seconds: Double) throws -> String {
        let deadline = MonotonicTime.seconds + seconds
        while true {
            let left = deadline - MonotonicTime.seconds
            guard left > 0 else { throw BenchError("\(name) did not print '\(prefix)' within \(Int(seconds)) s") }
            let line = try process.readLine(within: left)
            if line.hasPrefix(prefix) { return String(line.dropFirst(prefix.count)).trimmingCharacters(in: .whitespaces) }
        }
    }
}
