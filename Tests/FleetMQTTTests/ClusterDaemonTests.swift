import BlueZSimulator
import Foundation
import Synchronization
import Testing
import TestSupport

/// Several real daemons sharing one fleet through a real broker (`[cluster]`), each against its
/// own simulated bluetoothd (a `bluez-sim` process on a bus of its own), the bluetoothds sharing
/// one world of straps in which a peripheral holds one link, as the air enforces.
@Suite("Several gateways share one fleet through the broker", .serialized)
struct ClusterDaemonTests {
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

    static var world: Scenario {
        Scenario(
            seed: 28, adapters: [AdapterSpec(name: "hci0", slots: 5)],
            devices: straps.map { DeviceSpec(kind: .heartRateStrap, address: $0.address, heardByGateways: $0.heardBy) },
            world: WorldSpec(gateways: gatewayIDs.map { WorldGatewaySpec(id: $0) }))
    }

    static func segment(_ address: String) -> String { address.filter { $0 != ":" } }

    static var simulatorBinary: String {
        URL(fileURLWithPath: CommandLine.arguments[0]).deletingLastPathComponent().appendingPathComponent("bluez-sim").path
    }

    /// One gateway: its bluetoothd (bluez-sim in the world) and its wearfleetd.
    final class Gateway: Sendable {
        let id: String
        let bus: PrivateBus
        let simulator: ChildProcess
        let daemon: ChildProcess
        let directory: URL
        /// The daemon's last lines, for a failure's message.
        let tail = LineTail()

        init(_ id: String, worldFile: URL, worldDirectory: URL, broker: PrivateBroker) throws {
            self.id = id
            bus = try PrivateBus()
            simulator = try ChildProcess(
                ClusterDaemonTests.simulatorBinary,
                ["--bus", bus.address, "--world", worldFile.path, "--gateway", id, "--world-dir", worldDirectory.path, "--fast"])
            let ready = try simulator.readLine(within: 60)
            guard ready.hasPrefix("ready ") else { throw ChildProcessError.noOutput("bluez-sim", "not ready: \(ready)") }
            directory = worldDirectory.appendingPathComponent("daemon-\(id)")
            try FileManager.default.createDirectory(atPath: directory.appendingPathComponent("state").path, withIntermediateDirectories: true)
            let pins = ClusterDaemonTests.straps.map { "[[pinned]]\naddress = \"\($0.address)\"\nclass = \"strap\"\n" }.joined(separator: "\n")
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
                url = "\(broker.url)"
                gateway_id = "\(id)"
                topic_prefix = "\(ClusterDaemonTests.prefix)"
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
            Task { [tail] in
                for await line in lines { tail.lines.withLock { $0 = Array(($0 + [line]).suffix(40)) } }
            }
        }

        /// Power lost: the daemon and its bluetoothd end at once, links and all.
        func kill() {
            daemon.signal(SIGKILL)
            simulator.signal(SIGKILL)
            _ = daemon.waitForExit()
            _ = simulator.waitForExit()
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

    /// The devices' retained states as the broker hands them on: (device segment, state, gateway).
    struct StateWatch {
        let child: ChildProcess
        let lines: AsyncStream<String>

        init(broker: PrivateBroker) throws {
            child = try ChildProcess(
                "/usr/bin/mosquitto_sub", ["-h", "127.0.0.1", "-p", "\(broker.port)", "-v", "-t", "\(ClusterDaemonTests.prefix)/device/+/state"])
            lines = child.outputLines()
        }

        static func parse(_ line: String) -> (segment: String, state: String, gateway: String)? {
            guard let space = line.firstIndex(of: " ") else { return nil }
            let topic = line[..<space].split(separator: "/")
            guard topic.count == 4, let object = try? jsonObject(String(line[line.index(after: space)...])),
                  let state = object["state"] as? String, let gateway = object["gateway"] as? String
            else { return nil }
            return (String(topic[2]), state, gateway)
        }

        /// Reads states until every device of `segments` was last reported `ready` by a gateway
        /// `allowed` accepts; returns each device's gateway, and when each became ready.
        func untilReady(
            _ segments: Set<String>, by allowed: @escaping @Sendable (String) -> Bool, _ what: String
        ) async throws -> [String: (gateway: String, at: ContinuousClock.Instant)] {
            let latest = Mutex<[String: (state: String, gateway: String, at: ContinuousClock.Instant)]>([:])
            _ = try await lines.first(within: ClusterDaemonTests.patience, what) { line in
                guard let (segment, state, gateway) = Self.parse(line), segments.contains(segment) else { return false }
                return latest.withLock { latest in
                    latest[segment] = (state, gateway, .now)
                    return segments.allSatisfy { latest[$0]?.state == "ready" && allowed(latest[$0]?.gateway ?? "") }
                }
            }
            return latest.withLock { $0.mapValues { ($0.gateway, $0.at) } }
        }
    }

    @Test func eachStrapIsLinkedByOneGatewayAndADeadGatewaysStrapsAreLinkedElsewhere() async throws {
        let worldDirectory = FileManager.default.temporaryDirectory.appendingPathComponent("wearfleet-cluster-\(UUID().uuidString)")
        let world = try SharedWorld(directory: worldDirectory)
        defer { try? FileManager.default.removeItem(at: worldDirectory) }
        let worldFile = worldDirectory.appendingPathComponent("world.json")
        try JSONEncoder().encode(Self.world).write(to: worldFile)
        let broker = try PrivateBroker()
        let watch = try StateWatch(broker: broker)
        defer { _ = watch.child.terminate() }
        var gateways: [String: Gateway] = [:]
        for id in Self.gatewayIDs {
            gateways[id] = try Gateway(id, worldFile: worldFile, worldDirectory: worldDirectory, broker: broker)
        }
        defer { for gateway in gateways.values { gateway.stop() } }
        func diagnosis() -> String {
            let ledger = (try? world.snapshot()).map { "\($0.devices)" } ?? "no ledger"
            let tails = gateways.values.sorted { $0.id < $1.id }.map { "\($0.id):\n" + $0.tail.lines.withLock { $0.joined(separator: "\n") } }
            return ledger + "\n" + tails.joined(separator: "\n")
        }

        // 1. Every strap ready, each through exactly one gateway: the one the world says holds it.
        let segments = Set(Self.straps.map { Self.segment($0.address) })
        let started = ContinuousClock.now
        let ready: [String: (gateway: String, at: ContinuousClock.Instant)]
        do {
            ready = try await watch.untilReady(segments, by: { _ in true }, "every strap ready on some gateway")
        } catch {
            Issue.record("\(error)\n\(diagnosis())")
            return
        }
        let ledger = try world.snapshot()
        for strap in Self.straps {
            let record = ledger.device(strap.address)
            #expect(record.doubleLinks == 0, "\(strap.address) linked by two gateways at once: \(record)")
            #expect(record.linkedBy.count == 1, "\(strap.address): \(record)")
            #expect(record.linksMade.count == 1, "only the owner ever linked it, once: \(record)")
            #expect(record.connectsWhileHeldElsewhere.isEmpty, "no gateway tried a strap another held: \(record)")
            #expect(record.holder == ready[Self.segment(strap.address)]?.gateway, "the state comes from the gateway with the link: \(record)")
            #expect(strap.heardBy[record.holder ?? ""] != nil, "held by a gateway that hears it: \(record)")
        }
        // A command to a strap is run by its owner alone: one result, the value read through its
        // link (a gateway without the link would answer at once, with an error).
        let first = Self.segment(Self.straps[0].address)
        let resultTopic = "\(Self.prefix)/device/\(first)/command/result"
        let results = try await BrokerSubscriber(port: broker.port, topics: [resultTopic])
        for id in ["who", "after"] {
            try publish(
                port: broker.port, topic: "\(Self.prefix)/device/\(first)/command",
                #"{"id":"\#(id)","op":"read","characteristic":"2a24"}"#)
        }
        let answer = try await results.first(on: resultTopic, within: Self.patience) { $0.payload.contains(#""id":"who""#) }
        #expect(answer.payload.contains(#""ok":true"#), "\(answer)")
        _ = try await results.first(on: resultTopic, within: Self.patience) { $0.payload.contains(#""id":"after""#) }
        #expect(results.all(on: resultTopic).count == 2, "one answer per command: \(results.all(on: resultTopic))")

        let allReadyAfter = (ready.values.map(\.at).max() ?? started) - started
        print("cluster figure: 6 straps over 3 gateways all ready after \(allReadyAfter)")

        // 2. The gateway holding the most straps loses power: its straps go to the others.
        let holders = Dictionary(grouping: Self.straps.map(\.address)) { ledger.device($0).holder ?? "" }
        guard let (victim, lost) = holders.max(by: { $0.value.count < $1.value.count || ($0.value.count == $1.value.count && $0.key > $1.key) }),
              let gateway = gateways[victim]
        else {
            Issue.record("nobody holds anything: \(diagnosis())")
            return
        }
        let killedAt = ContinuousClock.now
        gateway.kill()
        gateways[victim] = nil
        let lostSegments = Set(lost.map(Self.segment))
        let handedOver: [String: (gateway: String, at: ContinuousClock.Instant)]
        do {
            handedOver = try await watch.untilReady(lostSegments, by: { $0 != victim }, "\(victim)'s straps ready elsewhere")
        } catch {
            Issue.record("\(error)\n\(diagnosis())")
            return
        }
        let after = try world.snapshot()
        for address in lost {
            let record = after.device(address)
            #expect(record.doubleLinks == 0, "\(address): \(record)")
            #expect(record.holder == handedOver[Self.segment(address)]?.gateway, "\(address): \(record)")
            #expect(record.heldAtDeath[victim] == 1, "\(address) was linked by \(victim) when it died: \(record)")
        }
        let refused = after.devices.values.map { $0.connectsWhileHeldElsewhere.values.reduce(0, +) }.reduce(0, +)
        print("cluster figure: Connects at a strap another gateway held, whole run: \(refused)")
        let handoffs = lostSegments.compactMap { handedOver[$0].map { $0.at - killedAt } }.sorted()
        print("cluster figure: \(victim) killed holding \(lost.count) straps; ready elsewhere after \(handoffs)")
    }
}
