import Foundation
import Glibc

/// Errors that end a benchmark run, with a sentence saying why.
struct BenchError: Error, CustomStringConvertible {
    let description: String
    init(_ description: String) { self.description = description }
}

/// Monotonic seconds, for deadlines and wall-clock figures.
enum Clock {
    static var now: Double {
        var ts = timespec()
        clock_gettime(CLOCK_MONOTONIC, &ts)
        return Double(ts.tv_sec) + Double(ts.tv_nsec) / 1e9
    }
}

/// User + system CPU of this whole process in microseconds: every thread counts, the
/// connection's loop thread as well as the tasks that consume its messages.
func processCPUMicroseconds() -> Int64 {
    var usage = rusage()
    getrusage(RUSAGE_SELF.rawValue, &usage)
    let seconds = Int64(usage.ru_utime.tv_sec + usage.ru_stime.tv_sec)
    return seconds * 1_000_000 + Int64(usage.ru_utime.tv_usec + usage.ru_stime.tv_usec)
}

/// The one JSON line every measuring role prints, Swift and C alike (see Benchmarks/c/dbus-floor.c).
struct RoleReport: Codable {
    var count: Int64
    var seconds: Double
    var cpu_us: Int64

    var perSecond: Double { seconds > 0 ? Double(count) / seconds : 0 }
    var cpuMicrosecondsEach: Double { count > 0 ? Double(cpu_us) / Double(count) : 0 }

    init(count: Int64, seconds: Double, cpuMicroseconds: Int64) {
        self.count = count
        self.seconds = seconds
        self.cpu_us = cpuMicroseconds
    }

    init(line: String, from name: String) throws {
        guard let decoded = try? JSONDecoder().decode(RoleReport.self, from: Data(line.utf8)) else {
            throw BenchError("\(name) printed '\(line)' instead of its report")
        }
        self = decoded
    }

    func print() {
        writeLine(#"{"count":\#(count),"seconds":\#(seconds),"cpu_us":\#(cpu_us)}"#)
    }
}

/// Writes one line to stdout at once, unbuffered: the orchestrator waits for it on a pipe.
func writeLine(_ text: String) {
    var bytes = Array((text + "\n").utf8)
    var offset = 0
    while offset < bytes.count {
        let written = bytes.withUnsafeMutableBytes { write(1, $0.baseAddress! + offset, $0.count - offset) }
        if written < 0 && errno == EINTR { continue }
        guard written > 0 else { return }
        offset += written
    }
}
