import BlueZSimulator
import FleetCore
import Foundation
import ProcessSupport
import Synchronization

/// Section 9: several gateways sharing one fleet through one broker (`[cluster]`, its defaults).
/// Three gateways — each a private bus, a `bluez-sim` playing its bluetoothd in one shared world
/// and the real `wearfleetd` — and thirty straps, each heard by two or three of them, one
/// mosquitto. Measured: how long after a cold start every strap is ready; the ownership messages
/// (claims, bids, heartbeats) per device per minute at rest; and, `rounds` times, the gateway
/// owning the most straps losing power (daemon and bluetoothd SIGKILLed: the broker sees the TCP
/// connection end and sends its Will) and each of its straps ready on another gateway, timed from
/// the kill to its `ready` state on the broker. The world counts every link: a strap linked by two
/// gateways at once would be a double link. No peer: no open gateway shares a fleet this way.
struct ClusterSuite {
    let options: Options
    let directory: URL

    static let gateways = ["gw1", "gw2", "gw3"]
    static let straps = 30
    static let prefix = "wearfleet"
    static let rounds = 3

    /// Strap `index` lives in room `index % 3`: heard there at −48…−60 dBm, in the next room at
    /// −68…−80, and in the third (two straps in five) at −80…−88 — as `scenarios/demo-multi.json`.
    static var scenario: Scenario {
        var random = SeededRandom(seed: 28)
        let devices = (0..<straps).map { index -> DeviceSpec in
            var heard = [gateways[index % 3]: -48 - Int(random.next() % 13), gateways[(index + 1) % 3]: -68 - Int(random.next() % 13)]
            if random.next() % 5 < 2 { heard[gateways[(index + 2) % 3]] = -80 - Int(random.next() % 9) }
            return DeviceSpec(kind: .heartRateStrap, address: address(index), heardByGateways: heard)
        }
        // Three adapters of 10 slots: room for every strap on any gateway, so whichever gateway
        // dies, what its straps need is a gateway that hears them, never a free slot.
        return Scenario(
            seed: 28, adapters: (0..<3).map { AdapterSpec(name: "hci\($0)", slots: 10) }, devices: devices,
            world: WorldSpec(gateways: gateways.map { WorldGatewaySpec(id: $0) }))
    }

    static func address(_ index: Int) -> String { String(format: "AA:BB:CC:20:00:%02X", index + 1) }
    static func segment(_ address: String) -> String { address.filter { $0 != ":" } }

    /// One gateway's processes.
    final class Gateway {
        let bus: PrivateBus
        let simulator: ChildProcess
        let daemon: DaemonProcess

        init(_ id: String, suite: ClusterSuite, world: URL, worldDirectory: URL, brokerURL: String, round: Int) throws {
            bus = try PrivateBus()
            simulator = try ChildProcess(
                suite.options.simulator,
                ["--bus", bus.address, "--world", world.path, "--gateway", id, "--world-dir", worldDirectory.path])
            guard try simulator.readLine(within: 60).hasPrefix("ready") else { throw BenchError("bluez-sim \(id) did not start") }
            let state = suite.directory.appendingPathComponent("cluster-\(id)-state")
            try FileManager.default.createDirectory(at: state, withIntermediateDirectories: true)
            let pins = (0..<ClusterSuite.straps).map { "[[pinned]]\naddress = \"\(ClusterSuite.address($0))\"\nclass = \"strap\"\n" }
            let config = suite.directory.appendingPathComponent("cluster-\(id).toml")
            try """
                [fleet]
                adapters = ["hci0", "hci1", "hci2"]
                slots_per_adapter = 10
                max_connections = 30

                [classes.strap]
                subscribe = ["2A37"]

                [metrics]
                enabled = false

                [mqtt]
                enabled = true
                url = "\(brokerURL)"
                gateway_id = "\(id)"

                [cluster]
                enabled = true

                \(pins.joined(separator: "\n"))
                """.write(to: config, atomically: true, encoding: .utf8)
            daemon = try DaemonProcess(
                executable: suite.options.wearfleetd, bus: bus.address, config: config.path, stateDirectory: state.path,
                directory: suite.directory, name: "cluster-\(id)-\(round)")
        }

        func kill() {
            daemon.process.signal(SIGKILL)
            simulator.signal(SIGKILL)
            _ = daemon.process.waitForExit()
            _ = simulator.waitForExit()
            bus.stop()
        }

        func stop() {
            daemon.stop()
            _ = simulator.terminate()
            bus.stop()
        }
    }

    /// Every message on the ownership and state topics, with when it arrived.
    final class BrokerLog: Sendable {
        struct Line: Sendable {
            var at: Double
            var topic: String
            var payload: String
        }

        let child: ChildProcess
        let lines = Mutex<[Line]>([])

        init(port: Int) throws {
            child = try ChildProcess("/usr/bin/mosquitto_sub", [
                "-h", "127.0.0.1", "-p", "\(port)", "-v", "-t", "\(ClusterSuite.prefix)/device/+/owner",
                "-t", "\(ClusterSuite.prefix)/device/+/state", "-t", "\(ClusterSuite.prefix)/gateway/+/alive",
                "-t", "\(ClusterSuite.prefix)/gateway/+/bids", "-t", "\(ClusterSuite.prefix)/gateway/+/status",
            ])
            Thread.detachNewThread { [self] in
                while let line = child.readLine() {
                    let (topic, payload) = line.firstIndex(of: " ").map { (String(line[..<$0]), String(line[line.index(after: $0)...])) } ?? (line, "")
                    lines.withLock { $0.append(Line(at: MonotonicTime.seconds, topic: topic, payload: payload)) }
                }
            }
        }

        /// Each strap's latest state as (state, gateway, when).
        func states() -> [String: (state: String, gateway: String, at: Double)] {
            var latest: [String: (String, String, Double)] = [:]
            for line in lines.withLock({ $0 }) where line.topic.hasSuffix("/state") {
                let parts = line.topic.split(separator: "/")
                guard parts.count == 4,
                      let object = try? JSONSerialization.jsonObject(with: Data(line.payload.utf8)) as? [String: Any],
                      let state = object["state"] as? String, let gateway = object["gateway"] as? String
                else { continue }
                latest[String(parts[2])] = (state, gateway, line.at)
            }
            return latest
        }

        /// Ownership messages (claims, bids, heartbeats) that arrived between the two instants.
        func ownershipMessages(from start: Double, to end: Double) -> Int {
            lines.withLock { lines in
                lines.filter { line in
                    line.at >= start && line.at < end
                        && (line.topic.hasSuffix("/owner") || line.topic.hasSuffix("/alive") || line.topic.hasSuffix("/bids"))
                }.count
            }
        }

        /// Polls until `gateway` has sent `count` heartbeats since `since`.
        func waitForHeartbeats(of gateway: String, count: Int, since: Double, within seconds: Double) throws {
            let deadline = MonotonicTime.seconds + seconds
            let topic = "\(ClusterSuite.prefix)/gateway/\(gateway)/alive"
            while MonotonicTime.seconds < deadline {
                if lines.withLock({ $0.filter { $0.at >= since && $0.topic == topic }.count }) >= count { return }
                MonotonicTime.sleep(0.1)
            }
            throw BenchError("cluster: \(gateway) sent no \(count) heartbeats within \(Int(seconds)) s")
        }

        /// Polls until every strap of `segments` was last `ready` on a gateway `allowed` takes.
        func waitUntilReady(_ segments: Set<String>, within seconds: Double, allowed: (String) -> Bool) throws -> [String: (gateway: String, at: Double)] {
            let deadline = MonotonicTime.seconds + seconds
            while MonotonicTime.seconds < deadline {
                let states = self.states()
                if segments.allSatisfy({ states[$0]?.state == "ready" && allowed(states[$0]?.gateway ?? "") }) {
                    return states.filter { segments.contains($0.key) }.mapValues { ($0.gateway, $0.at) }
                }
                MonotonicTime.sleep(0.05)
            }
            throw BenchError("cluster: straps not ready within \(Int(seconds)) s")
        }
    }

    func run() throws -> ClusterResult {
        log("cluster: \(Self.straps) straps over \(Self.gateways.count) gateways, \(Self.rounds) power losses")
        let worldDirectory = directory.appendingPathComponent("cluster-world")
        try? FileManager.default.removeItem(at: worldDirectory)
        let world = try SharedWorld(directory: worldDirectory)
        let worldFile = directory.appendingPathComponent("cluster-world.json")
        try JSONEncoder().encode(Self.scenario).write(to: worldFile)
        let broker = try PrivateBroker()
        let brokerLog = try BrokerLog(port: broker.port)
        defer { _ = brokerLog.child.terminate() }
        var running: [String: Gateway] = [:]
        defer { for gateway in running.values { gateway.stop() } }
        let segments = Set((0..<Self.straps).map { Self.segment(Self.address($0)) })

        let started = MonotonicTime.seconds
        for id in Self.gateways {
            running[id] = try Gateway(id, suite: self, world: worldFile, worldDirectory: worldDirectory, brokerURL: broker.url, round: 0)
        }
        let ready = try brokerLog.waitUntilReady(segments, within: 180) { _ in true }
        var result = ClusterResult(devices: Self.straps, gateways: Self.gateways.count)
        result.coldStartSeconds = (ready.values.map(\.at).max() ?? started) - started

        // At rest: a window with nothing happening but heartbeats and whatever bids move.
        MonotonicTime.sleep(options.settleSeconds)
        let restStart = MonotonicTime.seconds
        MonotonicTime.sleep(max(options.windowSeconds * 6, 60))
        let restEnd = MonotonicTime.seconds
        let messages = brokerLog.ownershipMessages(from: restStart, to: restEnd)
        result.restSeconds = restEnd - restStart
        result.messagesPerDeviceMinute = Double(messages) / Double(Self.straps) / (result.restSeconds / 60)

        for round in 1...Self.rounds {
            let states = brokerLog.states()
            let owned = Dictionary(grouping: segments) { states[$0]?.gateway ?? "" }
            guard let (victim, lost) = owned.filter({ running[$0.key] != nil }).max(by: { $0.value.count < $1.value.count || ($0.value.count == $1.value.count && $0.key > $1.key) })
            else { throw BenchError("cluster: nobody owns anything") }
            log("cluster: round \(round): \(victim) loses power holding \(lost.count) straps")
            let killedAt = MonotonicTime.seconds
            running.removeValue(forKey: victim)?.kill()
            let handed = try brokerLog.waitUntilReady(Set(lost), within: 120) { $0 != victim }
            result.handoffSeconds += lost.compactMap { handed[$0].map { $0.at - killedAt } }
            let restarted = MonotonicTime.seconds
            running[victim] = try Gateway(
                victim, suite: self, world: worldFile, worldDirectory: worldDirectory, brokerURL: broker.url, round: round)
            // Back for good before the next loss: past its resync grace (lease + renewal, 20 s),
            // which its fifth heartbeat (one per 5 s renewal) marks. A gateway still in its grace
            // claims nothing, and would only time how long the grace lasts.
            try brokerLog.waitForHeartbeats(of: victim, count: 6, since: restarted, within: 120)
        }
        result.handoffSeconds.sort()
        let ledger = try world.snapshot()
        result.doubleLinks = ledger.devices.values.map(\.doubleLinks).reduce(0, +)
        result.connectsRefusedHeldElsewhere = ledger.devices.values.map { $0.connectsWhileHeldElsewhere.values.reduce(0, +) }.reduce(0, +)
        return result
    }
}
