import Foundation
import ProcessSupport

// fleet-bench: wearfleetd's ingest, scale, recovery and write figures next to a C libdbus floor
// and bleak, against bluez-sim on private buses, in one run. Without a role it drives the run;
// `agent` and `writer` are measured sides, each in a process of its own so its CPU time is its own.

do {
    let options = try Options(Array(CommandLine.arguments.dropFirst()))
    switch options.role {
    case "agent":
        try AgentRole.run(bus: options.bus, configPath: options.config, stateDirectory: options.stateDirectory)
    case "writer":
        try WriterRole.run(bus: options.bus, configPath: options.config, stateDirectory: options.stateDirectory, seconds: options.writeSeconds)
    case "watcher":
        try WatcherRole.run(bus: options.bus, warmup: options.warmupSeconds, seconds: options.writeSeconds)
    default:
        try Driver(options: options).run()
    }
} catch {
    FileHandle.standardError.write(Data("fleet-bench: \(error)\n".utf8))
    exit(1)
}
