import Foundation

/// A `wearfleetd.toml` for one benchmark run, written the way an operator would write it.
struct DaemonConfiguration {
    /// A `[classes.NAME]` table.
    struct DeviceClass {
        var name: String
        var read: [String] = []
        var subscribe: [String] = []
        var requiredServices: [String] = []
        var fileDescriptorPath = false
    }

    var pinned: [(address: String, addressType: String)]
    var deviceClass: DeviceClass
    var maxConnections: Int
    var slotsPerAdapter: Int
    var attemptBurst = 4
    var attemptInterval = "250ms"
    var poolEnabled = false
    /// `[pool] name_prefixes`: empty, any name.
    var poolNamePrefixes: [String] = []
    var logLevel = "info"
    /// The Prometheus endpoint's port: each daemon of a run has its own (scale runs three at once).
    var metricsPort = 9468
    /// More sections, as written (the MQTT run's `[mqtt]`).
    var extra = ""

    var text: String {
        func list(_ values: [String]) -> String { "[" + values.map { "\"\($0)\"" }.joined(separator: ", ") + "]" }
        var lines = [
            "# Written by fleet-bench for one run.",
            "[daemon]",
            "disconnect_on_stop = true",
            "state_debounce = \"2s\"",
            "log_level = \"\(logLevel)\"",
            "",
            "[fleet]",
            "max_connections = \(maxConnections)",
            "slots_per_adapter = \(slotsPerAdapter)",
            "attempt_burst = \(attemptBurst)",
            "attempt_interval = \"\(attemptInterval)\"",
            "",
            "[pool]",
            "enabled = \(poolEnabled)",
            poolNamePrefixes.isEmpty ? "" : "name_prefixes = \(list(poolNamePrefixes))",
            "",
            "[metrics]",
            "enabled = true",
            "listen = \"127.0.0.1:\(metricsPort)\"",
            "",
            "[classes.\(deviceClass.name)]",
            "read = \(list(deviceClass.read))",
            "subscribe = \(list(deviceClass.subscribe))",
            "required_services = \(list(deviceClass.requiredServices))",
            "fd_path = \(deviceClass.fileDescriptorPath)",
            "",
        ]
        for device in pinned {
            lines += [
                "[[pinned]]", "address = \"\(device.address)\"", "address_type = \"\(device.addressType)\"",
                "class = \"\(deviceClass.name)\"", "",
            ]
        }
        return lines.joined(separator: "\n") + "\n" + extra
    }

    /// Writes the file (and an empty state directory next to it); returns the file's path.
    func write(to directory: URL, name: String) throws -> (config: String, stateDirectory: String) {
        let file = directory.appendingPathComponent("\(name).toml")
        try text.write(to: file, atomically: true, encoding: .utf8)
        let state = directory.appendingPathComponent("\(name)-state")
        try FileManager.default.createDirectory(at: state, withIntermediateDirectories: true)
        return (file.path, state.path)
    }
}

/// UUIDs the benchmark's device classes use.
enum BenchUUIDs {
    static let motionService = "7a1e0001-3c6f-4b8d-9e2a-5d0c8f6b1a40"
    static let motionData = "7a1e0002-3c6f-4b8d-9e2a-5d0c8f6b1a40"
    static let motionControl = "7a1e0003-3c6f-4b8d-9e2a-5d0c8f6b1a40"
    static let heartRateService = "180D"
    static let heartRate = "2A37"
    static let battery = "2A19"
}
