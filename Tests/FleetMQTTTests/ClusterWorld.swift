import BlueZSimulator
import Foundation
import Synchronization
import Testing
import TestSupport

/// Several real daemons sharing one fleet through a real broker (`[cluster]`), each against its
/// own simulated bluetoothd (a `bluez-sim` process on a bus of its own), the bluetoothds sharing
/// one world of straps in which a peripheral holds one link, as the air enforces. Each gateway
/// reaches the broker through a relay of its own, so a test can cut one off.
final class ClusterWorld: Sendable {
    static let prefix = "wearfleet"
    /// Every wait: the whole suite on two starved cores (see `withTimeout`).
    static let patience: Duration = .seconds(120)

    /// Six straps, each heard by two or three of the gateways, none by all at the same strength.
    static let straps: [(address: String, heardBy: [String: Int])] = [
        ("00:1A:7D:00:01:01", ["gw1": -50, "gw2": -70, "gw3": -80]),
        ("00:1A:7D:00:01:02", ["gw1": -55, "gw2": -65]),
        ("00:1A:7D:00:01:03", ["gw2": -50, "gw3": -75]),
        ("00:1A:7D:00:01:04", ["gw1": -72, "gw2": -60, "gw3": -52]),
        ("00:1A:7D:00:01:05", ["gw1": -58, "gw3": -66]),
        ("00:1A:7D:00:01:06", ["gw1": -64, "gw2": -61, "gw3": -70]),
    ]
    static let gatewayIDs = ["gw1", "gw2", "gw3"]
    static var segments: Set<String> { Set(straps.map { segment($0.address) }) }

    static var scenario: Scenario {
        Scenario(
            seed: 28, adapters: [AdapterSpec(name: "hci0", slots: 5)],
            devices: straps.map { DeviceSpec(kind: .heartRateStrap, address: $0.address, heardByGateways: $0.heardBy) },
            world: WorldSpec(gateways: gatewayIDs.map { WorldGatewaySpec(id: $0) }))
    }

    static func segment(_ address: String) -> String { address.filter { $0 != ":" } }

    static var simulatorBinary: String {
        URL(fileURLWithPath: CommandLine.arguments[0]).deletingLastPathComponent().appendingPathComponent("bluez-sim").path
    }

    let directory: URL
    let world: SharedWorld
    let worldFile: URL
    let broker: PrivateBroker
    let relays: [String: SeverableRelay]
    private let running = Mutex<[String: Gateway]>([:])

    init() throws {
        directory = FileManager.default.temporaryDirectory.appendingPathComponent("wearfleet-cluster-\(UUID().uuidString)")
        world = try SharedWorld(directory: directory)
        worldFile = directory.appendingPathComponent("world.json")
        try JSONEncoder().encode(Self.scenario).write(to: worldFile)
        broker = try PrivateBroker()
        var relays: [String: SeverableRelay] = [:]
        for id in Self.gatewayIDs { relays[id] = try SeverableRelay(toPort: broker.port) }
        self.relays = relays
    }

    deinit {
        for gateway in running.withLock({ Array($0.values) }) { gateway.stop() }
        for relay in relays.values { relay.sever() }
        try? FileManager.default.removeItem(at: directory)
    }

    /// Starts (or starts again, with the state it kept) the gateway.
    func start(_ id: String) throws {
        guard let relay = relays[id] else { return }
        let gateway = try Gateway(id, world: self, brokerURL: "mqtt://127.0.0.1:\(relay.port)")
        running.withLock { $0[id] = gateway }
    }

    func startAll() throws {
        for id in Self.gatewayIDs { try start(id) }
    }

    /// Power lost: the gateway's daemon and bluetoothd end at once, links and all.
    func kill(_ id: String) {
        running.withLock { $0.removeValue(forKey: id) }?.kill()
    }

    var liveGateways: Set<String> { running.withLock { Set($0.keys) } }

    /// The world's ledger, each gateway's last lines: what a failure shows.
    func diagnosis() -> String {
        let ledger = (try? world.snapshot()).map { ledger in
            ledger.devices.sorted { $0.key < $1.key }.map { "\($0.key): \($0.value)" }.joined(separator: "\n")
        } ?? "no ledger"
        let tails = running.withLock { Array($0.values) }.sorted { $0.id < $1.id }.map {
            "--- \($0.id):\n" + $0.tail.lines.withLock { $0.joined(separator: "\n") }
        }
        return ledger + "\n" + tails.joined(separator: "\n")
    }

    /// One gateway: its bluetoothd (bluez-sim in the world) and its wearfleetd.
    final class Gateway: Sendable {
        let id: String
        let bus: PrivateBus
        let simulator: ChildProcess
        let daemon: ChildProcess
        /// The daemon's last lines, for a failure's message.
        let tail = LineTail()

        init(_ id: String, world: ClusterWorld, brokerURL: String) throws {
            self.id = id
            bus = try PrivateBus()
            simulator = try ChildProcess(
                ClusterWorld.simulatorBinary,
                ["--bus", bus.address, "--world", world.worldFile.path, "--gateway", id, "--world-dir", world.directory.path, "--fast"])
            let ready = try simulator.readLine(within: 60)
            guard ready.hasPrefix("ready ") else { throw ChildProcessError.noOutput("bluez-sim", "not ready: \(ready)") }
            let directory = world.directory.appendingPathComponent("daemon-\(id)")
            try FileManager.default.createDirectory(atPath: directory.appendingPathComponent("state").path, withIntermediateDirectories: true)
            let pins = ClusterWorld.straps.map { "[[pinned]]\naddress = \"\($0.address)\"\nclass = \"strap\"\n" }.joined(separator: "\n")
            let toml = """
                [fleet]
                adapters = ["hci0"]

                [classes.strap]
                subscribe = ["2A37"]

                \(pins)
                [metrics]
                enabled = false

                [mqtt]
                enabled = true
                url = "\(brokerURL)"
                gateway_id = "\(id)"
                topic_prefix = "\(ClusterWorld.prefix)"
                allow_commands = ["read"]

                [cluster]
                enabled = true
                lease = "3s"
                renewal = "1s"
                settle = "500ms"
                dwell = "20s"

                """
            let config = directory.appendingPathComponent("wearfleetd.toml").path
            try toml.write(toFile: config, atomically: true, encoding: .utf8)
            daemon = try ChildProcess(
                MQTTDaemon.wearfleetd,
                ["--bus", bus.address, "--config", config, "--state-dir", directory.appendingPathComponent("state").path,
                 "--log-format", "console"],
                mergeStderr: true)
            let lines = daemon.outputLines()
            // WEARFLEET_CLUSTER_LOGS=DIR keeps each daemon's whole log there, for a developer.
            let keep = ProcessInfo.processInfo.environment["WEARFLEET_CLUSTER_LOGS"].flatMap { directory in
                FileHandle(forWritingAtPath: Self.createLog(directory, id))
            }
            Task { [tail] in
                for await line in lines {
                    tail.lines.withLock { $0 = Array(($0 + [line]).suffix(40)) }
                    keep?.write(Data((line + "\n").utf8))
                }
            }
        }

        private static func createLog(_ directory: String, _ id: String) -> String {
            let path = directory + "/" + id + ".log"
            if !FileManager.default.fileExists(atPath: path) { FileManager.default.createFile(atPath: path, contents: nil) }
            return path
        }

        func kill() {
            daemon.signal(SIGKILL)
            simulator.signal(SIGKILL)
            _ = daemon.waitForExit()
            _ = simulator.waitForExit()
            bus.stop()
        }

        func stop() {
            _ = daemon.terminate(grace: 15)
            _ = simulator.terminate()
            bus.stop()
        }
    }

    final class LineTail: Sendable {
        let lines = Mutex<[String]>([])
    }

    /// The devices' retained states and owner claims as the broker hands them on, read by a
    /// `mosquitto_sub` of the test's own (straight to the broker, not through a relay).
    final class Watch: Sendable {
        struct Claim: Sendable, Equatable {
            var gateway: String?
            var epoch: Int
            var linked: Bool
        }

        let child: ChildProcess
        let lines: AsyncStream<String>
        /// Each device's latest state (state, gateway) and claim, by topic segment.
        let states = Mutex<[String: (state: String, gateway: String, at: ContinuousClock.Instant)]>([:])
        let claims = Mutex<[String: Claim]>([:])
        /// Each gateway's retained `status` (`online`/`offline`) and heartbeats seen.
        let statuses = Mutex<[String: String]>([:])
        let heartbeats = Mutex<[String: Int]>([:])

        init(broker: PrivateBroker) throws {
            child = try ChildProcess(
                "/usr/bin/mosquitto_sub",
                ["-h", "127.0.0.1", "-p", "\(broker.port)", "-v", "-t", "\(ClusterWorld.prefix)/device/+/state",
                 "-t", "\(ClusterWorld.prefix)/device/+/owner", "-t", "\(ClusterWorld.prefix)/gateway/+/status",
                 "-t", "\(ClusterWorld.prefix)/gateway/+/alive"])
            lines = child.outputLines()
        }

        deinit { _ = child.terminate() }

        /// Notes one line; true when it was a state or a claim.
        private func note(_ line: String) {
            guard let space = line.firstIndex(of: " ") else { return }
            let topic = line[..<space].split(separator: "/")
            guard topic.count == 4 else { return }
            let payload = String(line[line.index(after: space)...])
            if topic[1] == "gateway" {
                let gateway = String(topic[2])
                if topic[3] == "status" { statuses.withLock { $0[gateway] = payload } }
                if topic[3] == "alive" { heartbeats.withLock { $0[gateway, default: 0] += 1 } }
                return
            }
            guard let object = try? jsonObject(payload) else { return }
            let segment = String(topic[2])
            if topic[3] == "state", let state = object["state"] as? String, let gateway = object["gateway"] as? String {
                states.withLock { $0[segment] = (state, gateway, .now) }
            } else if topic[3] == "owner", let epoch = object["ep"] as? Int {
                let claim = Claim(gateway: object["gw"] as? String, epoch: epoch, linked: object["linked"] as? Bool ?? false)
                claims.withLock { $0[segment] = claim }
            }
        }

        /// Reads until `condition` holds over what was read (checked after every line).
        func until(_ what: String, within timeout: Duration = ClusterWorld.patience, _ condition: @escaping @Sendable (Watch) -> Bool) async throws {
            if condition(self) { return }
            _ = try await lines.first(within: timeout, what) { line in
                self.note(line)
                return condition(self)
            }
        }

        /// Every device of `segments` last reported `ready` by a gateway `allowed` accepts, and
        /// claimed by that same gateway.
        func allReady(_ segments: Set<String>, by allowed: @Sendable (String) -> Bool = { _ in true }) -> Bool {
            let states = self.states.withLock { $0 }
            let claims = self.claims.withLock { $0 }
            return segments.allSatisfy { segment in
                guard let state = states[segment], state.state == "ready", allowed(state.gateway) else { return false }
                return claims[segment]?.gateway == state.gateway
            }
        }

        func status(of gateway: String) -> String? { statuses.withLock { $0[gateway] } }
        func heartbeatCount(of gateway: String) -> Int { heartbeats.withLock { $0[gateway] ?? 0 } }

        func gateway(of segment: String) -> String? { states.withLock { $0[segment]?.gateway } }
        func readyAt(_ segment: String) -> ContinuousClock.Instant? { states.withLock { $0[segment]?.at } }
    }
}
