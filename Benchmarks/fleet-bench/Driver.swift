import Foundation

/// Runs the sections one after another (each on its own private buses), then prints the table
/// and writes the JSON.
struct Driver {
    let options: Options

    func run() throws {
        // The C floors take part in the ingest section only.
        let floors = options.sections.contains("ingest") ? [("dbus-floor", options.floor), ("fd-floor", options.fdFloor)] : []
        for (what, path) in [("bluez-sim", options.simulator), ("wearfleetd", options.wearfleetd)] + floors {
            guard FileManager.default.isExecutableFile(atPath: path) else {
                throw BenchError("no \(what) at \(path) (make bench builds it)")
            }
        }
        if options.sections.contains("mqtt"), !FileManager.default.isExecutableFile(atPath: options.mqttFloor) {
            throw BenchError("no mqtt-floor at \(options.mqttFloor) (make bench builds it)")
        }
        if let python = options.python, !FileManager.default.isExecutableFile(atPath: python) {
            throw BenchError("no Python at \(python): run scripts/bench-venv.sh, or pass --no-bleak")
        }
        let work = URL(fileURLWithPath: options.workDirectory)
        try? FileManager.default.removeItem(at: work)
        try FileManager.default.createDirectory(at: work, withIntermediateDirectories: true)
        let started = MonotonicTime.seconds
        var results = BenchResults(timeScale: options.timeScale, attemptInterval: options.attemptInterval)
        // A section that fails is reported and the others still run.
        func section(_ name: String, _ body: () throws -> Void) {
            guard options.sections.contains(name) else { return }
            do {
                try body()
            } catch {
                log("\(name) failed: \(error)")
                results.failures.append("\(name): \(error)")
            }
        }
        section("ingest") { (results.ingest, results.ingestSetup) = try IngestSuite(options: options, directory: work).run() }
        section("scale") { results.scale = try ScaleSuite(options: options, directory: work).run() }
        section("recovery") { results.recovery = try RecoverySuite(options: options, directory: work).run() }
        section("writes") { results.writes = try WriteSuite(options: options, directory: work).run() }
        section("commands") { results.commands = try CommandSuite(options: options, directory: work).run() }
        section("mqtt") { results.mqtt = try MQTTSuite(options: options, directory: work).run() }
        section("watch") { results.watch = try WatchSuite(options: options, directory: work).run() }
        section("churn") { results.churn = try ChurnSuite(options: options, directory: work).run() }
        section("cluster") { results.cluster = try ClusterSuite(options: options, directory: work).run() }
        results.targets = Targets.check(results)
        results.secondsTotal = MonotonicTime.seconds - started
        print(Report.text(results))
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.prettyPrinted, .sortedKeys]
        encoder.nonConformingFloatEncodingStrategy = .convertToString(positiveInfinity: "inf", negativeInfinity: "-inf", nan: "nan")
        let json = URL(fileURLWithPath: options.jsonPath)
        try FileManager.default.createDirectory(at: json.deletingLastPathComponent(), withIntermediateDirectories: true)
        try encoder.encode(results).write(to: json)
        log(String(format: "done in %.0f s; figures in %@", results.secondsTotal, options.jsonPath))
        guard results.failures.isEmpty else { throw BenchError("failed sections: \(results.failures.joined(separator: "; "))") }
    }
}
