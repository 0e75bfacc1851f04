import Foundation

/// Command-line options of dbus-bench.
struct Options {
    /// The C baseline (`dbus-floor`); by default next to this executable, where
    /// scripts/build-c-baseline.sh puts it.
    var cBaseline: String
    var jsonPath: String?
    /// Duration of each round-trip measurement.
    var seconds = 3.0
    /// Signals per ingest measurement.
    var signals = 100_000
    /// Each measurement runs this many times; the table shows the median.
    var repeats = 3
    /// Set in child processes: which Swift side to run (`calls` or `recv`).
    var role: String?
    var address = ""
    var inflight = 1

    static let usage = """
        usage: dbus-bench [--c-baseline PATH] [--json PATH] [--seconds S] [--signals N] [--repeat R]
          Starts a private dbus-daemon and the C baseline's echo server, then measures method round
          trips (1 and 32 in flight) and PropertiesChanged ingest, each with the Swift DBus library
          and with plain libdbus (dbus-floor), and prints both side by side.
        """

    init(_ arguments: [String]) throws {
        cBaseline = URL(fileURLWithPath: selfExecutable()).deletingLastPathComponent().appendingPathComponent("dbus-floor").path
        var rest = arguments[...]
        func value(_ flag: String) throws -> String {
            guard let next = rest.popFirst() else { throw BenchError("\(flag) needs a value\n\(Self.usage)") }
            return next
        }
        func number(_ flag: String) throws -> Double {
            let text = try value(flag)
            guard let parsed = Double(text), parsed > 0 else { throw BenchError("\(flag): '\(text)' is not a positive number") }
            return parsed
        }
        while let flag = rest.popFirst() {
            switch flag {
            case "--c-baseline": cBaseline = try value(flag)
            case "--json": jsonPath = try value(flag)
            case "--seconds": seconds = try number(flag)
            case "--signals": signals = Int(try number(flag))
            case "--repeat": repeats = Int(try number(flag))
            case "--role": role = try value(flag)
            case "--address": address = try value(flag)
            case "--inflight": inflight = Int(try number(flag))
            case "-h", "--help": throw BenchError(Self.usage)
            default: throw BenchError("unknown option \(flag)\n\(Self.usage)")
            }
        }
    }
}

/// This executable's path, to start its Swift roles as separate processes.
func selfExecutable() -> String {
    (try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/exe")) ?? CommandLine.arguments[0]
}
