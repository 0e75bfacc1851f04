import Foundation

/// Command line of `fleet-bench` (the driver) and of its `agent` role.
struct Options {
    struct IngestCellPlan {
        var rate: Double
        var payload: Int
    }

    var role: String?
    // Driver.
    var simulator = ".build/release/bluez-sim"
    var wearfleetd = ".build/release/wearfleetd"
    var floor = ".build/release/dbus-floor"
    var fdFloor = ".build/release/fd-floor"
    var mqttFloor = ".build/release/mqtt-floor"
    var python: String? = ".build-bench-venv/bin/python"
    var bleakScript = "Benchmarks/python/bleak_ingest.py"
    var jsonPath = ".build/bench/fleet-bench.json"
    var workDirectory = ".build/bench/work"
    var sections: Set<String> = ["ingest", "scale", "recovery", "writes", "commands", "mqtt", "watch", "churn", "cluster"]
    var ingestDevices = [10, 100]
    var rates: [Double] = [1, 50, 200]
    var payloads = [20, 244]
    var scaleDevices = [10, 100, 1000]
    /// `churn`: distinct passers-by streamed through discovery, and over how many seconds.
    var churnDevices = 10_000
    var churnSeconds = 600.0
    var windowSeconds = 5.0
    var settleSeconds = 1.0
    var idleSeconds = 60.0
    var writeSeconds = 5.0
    /// `watcher`: seconds read before measuring.
    var warmupSeconds = 2.0
    /// Multiplies the simulator's radio delays (connect, resolve, advertising).
    var timeScale = 0.1
    var attemptInterval = "25ms"
    /// bleak takes part in cells up to this many notifications per second.
    var bleakLimit = 5000.0
    // Agent.
    var bus = ""
    var config = ""
    var stateDirectory = ""

    var selfExecutable: String {
        (try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/exe")) ?? CommandLine.arguments[0]
    }

    var attemptIntervalDuration: Duration {
        let digits = attemptInterval.prefix { $0.isNumber }
        return .milliseconds(Int(digits) ?? 250)
    }

    /// Rates ascending (bleak leaves once they outgrow it), payloads within each rate.
    func ingestCells(devices: Int) -> [IngestCellPlan] {
        rates.sorted().flatMap { rate in payloads.map { IngestCellPlan(rate: rate, payload: $0) } }
    }

    static let usage = """
        usage: fleet-bench [--json PATH] [--work DIR] [--sections ingest,scale,recovery,writes,commands,mqtt,watch,churn,cluster]
                           [--ingest-devices 10,100] [--rates 1,50,200] [--payloads 20,244] [--scale-devices 10,100,1000] [--churn-devices N] [--churn-seconds S]
                           [--window S] [--idle S] [--time-scale X] [--bleak-limit N] [--no-bleak]
                           [--simulator PATH] [--wearfleetd PATH] [--floor PATH] [--fd-floor PATH] [--mqtt-floor PATH] [--python PATH] [--bleak-script PATH]
               fleet-bench agent --bus ADDRESS --config FILE --state-dir DIR
               fleet-bench writer --bus ADDRESS --config FILE --state-dir DIR --seconds S
               fleet-bench watcher --bus ADDRESS --warmup S --seconds S
        """

    init(_ arguments: [String]) throws {
        var rest = arguments[...]
        if let first = rest.first, ["agent", "writer", "watcher"].contains(first) {
            role = first
            rest = rest.dropFirst()
        }
        func value(_ flag: String) throws -> String {
            guard let next = rest.popFirst() else { throw BenchError("\(flag) needs a value\n\(Self.usage)") }
            return next
        }
        func numbers(_ flag: String) throws -> [Double] {
            let text = try value(flag)
            let parsed = text.split(separator: ",").compactMap { Double($0) }
            guard !parsed.isEmpty, parsed.count == text.split(separator: ",").count else { throw BenchError("\(flag): bad list '\(text)'") }
            return parsed
        }
        func number(_ flag: String) throws -> Double {
            let text = try value(flag)
            guard let parsed = Double(text), parsed >= 0 else { throw BenchError("\(flag): bad number '\(text)'") }
            return parsed
        }
        while let flag = rest.popFirst() {
            switch flag {
            case "--json": jsonPath = try value(flag)
            case "--work": workDirectory = try value(flag)
            case "--sections": sections = Set(try value(flag).split(separator: ",").map(String.init))
            case "--ingest-devices": ingestDevices = try numbers(flag).map { Int($0) }
            case "--rates": rates = try numbers(flag)
            case "--payloads": payloads = try numbers(flag).map { Int($0) }
            case "--scale-devices": scaleDevices = try numbers(flag).map { Int($0) }
            case "--churn-devices": churnDevices = Int(try numbers(flag)[0])
            case "--churn-seconds": churnSeconds = try numbers(flag)[0]
            case "--window": windowSeconds = try number(flag)
            case "--idle": idleSeconds = try number(flag)
            case "--time-scale": timeScale = try number(flag)
            case "--bleak-limit": bleakLimit = try number(flag)
            case "--no-bleak": python = nil
            case "--simulator": simulator = try value(flag)
            case "--wearfleetd": wearfleetd = try value(flag)
            case "--floor": floor = try value(flag)
            case "--fd-floor": fdFloor = try value(flag)
            case "--mqtt-floor": mqttFloor = try value(flag)
            case "--python": python = try value(flag)
            case "--bleak-script": bleakScript = try value(flag)
            case "--bus": bus = try value(flag)
            case "--config": config = try value(flag)
            case "--state-dir": stateDirectory = try value(flag)
            case "--seconds": writeSeconds = try number(flag)
            case "--warmup": warmupSeconds = try number(flag)
            case "--help", "-h": throw BenchError(Self.usage)
            default: throw BenchError("unknown option \(flag)\n\(Self.usage)")
            }
        }
        let unknown = sections.subtracting(["ingest", "scale", "recovery", "writes", "commands", "mqtt", "watch", "churn", "cluster"])
        guard unknown.isEmpty else { throw BenchError("unknown sections: \(unknown.sorted().joined(separator: ","))") }
        if role == "watcher", bus.isEmpty { throw BenchError("watcher needs --bus\n\(Self.usage)") }
        if role != nil, role != "watcher", bus.isEmpty || config.isEmpty || stateDirectory.isEmpty {
            throw BenchError("\(role ?? "") needs --bus, --config and --state-dir\n\(Self.usage)")
        }
    }
}
