import BlueZSimulator
import Foundation
import Synchronization
import TestSupport

/// The real daemon publishing to a private broker, against the simulated bluetoothd on a
/// private bus: a watch (heart rate, battery, temperature, SpO2, Device Information) and a
/// motion band (a writable control characteristic).
final class MQTTDaemon: Sendable {
    static let watch = "C0:FF:EE:00:00:01"
    static let band = "C0:FF:EE:00:00:02"
    static var watchSegment: String { watch.filter { $0 != ":" } }
    static var bandSegment: String { band.filter { $0 != ":" } }
    static var wearfleetd: String {
        URL(fileURLWithPath: CommandLine.arguments[0]).deletingLastPathComponent().appendingPathComponent("wearfleetd").path
    }

    let bus: PrivateBus
    let simulator: BlueZSimulator
    let directory: URL
    let child: ChildProcess
    let configPath: String
    let lines: AsyncStream<String>
    private let seen = Mutex<[String]>([])

    /// - Parameters:
    ///   - url: the broker's URL in `[mqtt]` (default: its plain loopback listener).
    ///   - extra: more `[mqtt]` lines.
    ///   - metricsPort: a loopback port to serve `/metrics` on (default: metrics off).
    ///   - bandClass: more `[classes.band]` lines.
    ///   - allowCommands: `allow_commands`.
    ///   - others: more devices the simulated radio hears (not pinned).
    ///   - tail: more TOML at the end of the configuration (sections of its own).
    init(
        broker: PrivateBroker, url: String? = nil, mqtt extra: String = "", metricsPort: Int? = nil, bandClass: String = "",
        allowCommands: [String] = ["write", "read"], others: [DeviceSpec] = [], tail: String = ""
    ) async throws {
        bus = try PrivateBus()
        let scenario = Scenario(
            seed: 18, adapters: [AdapterSpec(name: "hci0", slots: 5)],
            devices: [
                DeviceSpec(kind: .watch, address: Self.watch, addressType: "public", name: "Watch", bonded: true, notifyHz: 5),
                DeviceSpec(kind: .motionBand, address: Self.band, addressType: "public", name: "Band", bonded: true, notifyHz: 1),
            ] + others)
        simulator = try BlueZSimulator(scenario: scenario, bus: .address(bus.address), timings: .fast)
        try await simulator.start()
        directory = FileManager.default.temporaryDirectory.appendingPathComponent("wearfleet-mqtt-\(UUID().uuidString)")
        try FileManager.default.createDirectory(atPath: directory.appendingPathComponent("state").path, withIntermediateDirectories: true)
        let toml = """
            [fleet]
            adapters = ["hci0"]

            [classes.watch]
            subscribe = ["2A37", "2A19", "2A5F"]
            read = ["2A19", "2A24", "2A29"]

            [classes.band]
            subscribe = ["7a1e0002-3c6f-4b8d-9e2a-5d0c8f6b1a40"]
            \(bandClass)

            [[pinned]]
            address = "\(Self.watch)"
            name = "Ward watch"
            class = "watch"

            [[pinned]]
            address = "\(Self.band)"
            name = "Band"
            class = "band"

            [metrics]
            \(metricsPort.map { "listen = \"127.0.0.1:\($0)\"" } ?? "enabled = false")

            [mqtt]
            enabled = true
            url = "\(url ?? broker.url)"
            gateway_id = "gw1"
            allow_commands = [\(allowCommands.map { "\"\($0)\"" }.joined(separator: ", "))]
            \(extra)

            \(tail)

            """
        let config = directory.appendingPathComponent("wearfleetd.toml").path
        configPath = config
        try toml.write(toFile: config, atomically: true, encoding: .utf8)
        child = try ChildProcess(
            Self.wearfleetd,
            ["--bus", bus.address, "--config", config, "--state-dir", directory.appendingPathComponent("state").path, "--log-format", "console"],
            mergeStderr: true)
        lines = child.outputLines()
    }

    deinit {
        child.signal(SIGKILL)
        try? FileManager.default.removeItem(at: directory)
    }

    /// Waits until the daemon has logged `count` lines containing `text`.
    func line(containing text: String, count: Int = 1, within timeout: Duration = .seconds(30)) async throws {
        if seen.withLock({ $0.filter { $0.contains(text) }.count }) >= count { return }
        _ = try await lines.first(within: timeout, "wearfleetd to log '\(text)' \(count) times") { line in
            self.seen.withLock { $0.append(line) }
            return self.seen.withLock { $0.filter { $0.contains(text) }.count } >= count
        }
    }

    /// The lines containing `text` among those `line(containing:)` has read so far, oldest first.
    func linesSeen(containing text: String) -> [String] {
        seen.withLock { $0.filter { $0.contains(text) } }
    }

    /// SIGTERM and the exit code (SIGKILL after 15 s).
    func stop() async -> Int32 {
        child.signal(SIGTERM)
        do {
            try await withTimeout(.seconds(15), "wearfleetd to exit") { for await _ in self.lines {} }
        } catch {
            child.signal(SIGKILL)
        }
        return child.waitForExit()
    }
}

/// `mosquitto_pub`: a real peer sending a command.
func publish(port: Int, topic: String, _ payload: String) throws {
    let child = try ChildProcess("/usr/bin/mosquitto_pub", ["-h", "127.0.0.1", "-p", "\(port)", "-q", "1", "-t", topic, "-m", payload])
    _ = child.finish(within: 10)
}

/// A JSON object's members (Foundation's reader: the test's own, not the daemon's).
func jsonObject(_ text: String) throws -> [String: Any] {
    guard let object = try JSONSerialization.jsonObject(with: Data(text.utf8)) as? [String: Any] else {
        throw ChildProcessError.noOutput("json", "not an object: \(text)")
    }
    return object
}

/// `child`'s next line, read on a thread of its own (never blocking the concurrency pool, where
/// the in-process simulator runs).
func readLineOffPool(_ child: ChildProcess, within seconds: Double) async throws -> String {
    try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<String, any Error>) in
        Thread.detachNewThread {
            do { continuation.resume(returning: try child.readLine(within: seconds)) } catch { continuation.resume(throwing: error) }
        }
    }
}
