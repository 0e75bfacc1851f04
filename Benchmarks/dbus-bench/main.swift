import ProcessSupport
import Foundation

// dbus-bench: the Swift DBus library's round trips and signal ingest next to a plain-libdbus
// C baseline, measured in one invocation on one private bus. Without --role it orchestrates;
// with --role it is one measured side, in a process of its own, so its CPU time is its own.

do {
    let options = try Options(Array(CommandLine.arguments.dropFirst()))
    switch options.role {
    case "calls":
        try runBlocking { try await runSwiftCalls(address: options.address, inflight: options.inflight, seconds: options.seconds) }.print()
    case "recv":
        try runBlocking { try await runSwiftReceive(address: options.address) }.print()
    case nil:
        guard FileManager.default.isExecutableFile(atPath: options.cBaseline) else {
            throw BenchError("no C baseline at \(options.cBaseline): build it with scripts/build-c-baseline.sh DIR, pass --c-baseline")
        }
        let bus = try PrivateBus()
        let figures = try Orchestrator(options: options, bus: bus).run()
        print(Report.table(figures))
        let verdict = Report.verdict(figures)
        print(verdict.text)
        if let path = options.jsonPath {
            try Report.json(figures, options: options).write(to: URL(fileURLWithPath: path))
        }
    case let other?:
        throw BenchError("unknown role \(other)")
    }
} catch {
    FileHandle.standardError.write(Data("dbus-bench: \(error)\n".utf8))
    exit(1)
}
