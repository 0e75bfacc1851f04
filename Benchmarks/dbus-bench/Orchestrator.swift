import ProcessSupport
import Foundation

/// Runs every measurement, each side in its own process against one private bus, and collects
/// the figures. Synchronous on purpose: it only starts processes and reads their reports, and
/// every read has a deadline, so no step can wait forever.
struct Orchestrator {
    let options: Options
    let bus: PrivateBus

    /// Slack on top of a role's expected duration before it is declared stuck and killed.
    private let grace = 30.0

    func run() throws -> [Figure] {
        let server = try ChildProcess(options.cBaseline, ["serve", bus.address])
        defer { server.terminate() }
        try expectReady(server)

        var samples: [String: [Double]] = [:]
        func record(_ key: String, _ value: Double) { samples[key, default: []].append(value) }
        for round in 1...options.repeats {
            log("round \(round)/\(options.repeats): round trips")
            for inflight in [1, 32] {
                let c = try runRole(options.cBaseline, ["calls", bus.address, "\(inflight)", "\(options.seconds)"])
                let swift = try runRole(selfExecutable(), swiftRole("calls", ["--inflight", "\(inflight)", "--seconds", "\(options.seconds)"]))
                record("calls\(inflight).c", c.perSecond)
                record("calls\(inflight).swift", swift.perSecond)
                record("callcpu\(inflight).c", c.cpuMicrosecondsEach)
                record("callcpu\(inflight).swift", swift.cpuMicrosecondsEach)
            }
            log("round \(round)/\(options.repeats): signal ingest")
            for (side, receiver) in [("c", (options.cBaseline, ["recv", bus.address])), ("swift", (selfExecutable(), swiftRole("recv", [])))] {
                let (report, daemonMicroseconds) = try runIngest(receiver: receiver)
                record("signals.\(side)", report.perSecond)
                record("signalcpu.\(side)", report.cpuMicrosecondsEach)
                record("daemoncpu.\(side)", daemonMicroseconds / Double(max(1, report.count)))
            }
        }
        func figure(_ name: String, _ key: String, _ unit: String, higherIsBetter: Bool) -> Figure {
            Figure(
                name: name, unit: unit, swift: median(samples["\(key).swift"] ?? []), c: median(samples["\(key).c"] ?? []),
                higherIsBetter: higherIsBetter)
        }
        return [
            figure("round trips/s, 1 in flight", "calls1", "calls/s", higherIsBetter: true),
            figure("round trips/s, 32 in flight", "calls32", "calls/s", higherIsBetter: true),
            figure("client CPU per call, 1 in flight", "callcpu1", "µs", higherIsBetter: false),
            figure("client CPU per call, 32 in flight", "callcpu32", "µs", higherIsBetter: false),
            figure("signals received+decoded/s", "signals", "signals/s", higherIsBetter: true),
            figure("receiver CPU per signal", "signalcpu", "µs", higherIsBetter: false),
            figure("dbus-daemon CPU per signal", "daemoncpu", "µs", higherIsBetter: false),
        ]
    }

    private func swiftRole(_ role: String, _ extra: [String]) -> [String] {
        ["--role", role, "--address", bus.address] + extra
    }

    /// One receiver (C or Swift) against the C sender: the sender is the same for both, so the
    /// only difference between the two runs is the receiving side.
    private func runIngest(receiver: (String, [String])) throws -> (RoleReport, Double) {
        let receiving = try ChildProcess(receiver.0, receiver.1)
        defer { receiving.terminate() }
        try expectReady(receiving)
        let daemonBefore = bus.cpuMicroseconds()
        _ = try runRole(options.cBaseline, ["send", bus.address, "\(options.signals)"])
        // The bus may still be draining its queue to a slower receiver: allow for it.
        let report = try RoleReport(line: try receiving.readLine(within: grace + Double(options.signals) / 5_000), from: receiving.name)
        let daemonMicroseconds = bus.cpuMicroseconds() - daemonBefore
        guard receiving.finish(within: 5) else { throw BenchError("\(receiving.name) failed") }
        guard report.count == Int64(options.signals) else {
            throw BenchError("\(receiving.name) received \(report.count) of \(options.signals) signals")
        }
        return (report, daemonMicroseconds)
    }

    private func runRole(_ executable: String, _ arguments: [String]) throws -> RoleReport {
        let child = try ChildProcess(executable, arguments)
        defer { child.terminate() }
        let expected = arguments.contains("send") ? Double(options.signals) / 5_000 : options.seconds
        let report = try RoleReport(line: try child.readLine(within: expected + grace), from: child.name)
        guard child.finish(within: 5) else { throw BenchError("\(child.name) failed") }
        return report
    }

    private func expectReady(_ child: ChildProcess) throws {
        let line = try child.readLine(within: grace)
        guard line == "ready" else { throw BenchError("\(child.name) printed '\(line)' instead of 'ready'") }
    }
}

func median(_ values: [Double]) -> Double {
    guard !values.isEmpty else { return .nan }
    let sorted = values.sorted()
    let middle = sorted.count / 2
    return sorted.count % 2 == 1 ? sorted[middle] : (sorted[middle - 1] + sorted[middle]) / 2
}

/// Progress goes to stderr, so stdout holds only the table.
func log(_ text: String) {
    FileHandle.standardError.write(Data("dbus-bench: \(text)\n".utf8))
}
