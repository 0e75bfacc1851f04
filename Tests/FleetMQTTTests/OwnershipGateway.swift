import Fleet
import FleetCore
@testable import FleetMQTT
import Foundation
import Logging
import ProcessSupport
import Synchronization
import Testing
import TestSupport

/// One gateway of an ownership test: a real `MQTTClient` with the daemon's Will (its `status`
/// `offline`), an `OwnershipCoordinator` fed by the client's events (directly, or routed by an
/// `MQTTBridge` as in the daemon), and a stand-in for the fleet that links a device the moment
/// it is acquired and unlinks it the moment it is released, recording every decision.
final class OwnershipGateway: Sendable {
    static let prefix = "wf-own"
    /// Short enough for a test, and `settle` far above loopback delivery (the machine's guarantee
    /// needs every message within `settle / 2`); `dwell` longer than any test, so that no handoff
    /// happens unless a test wants one.
    static let timings = OwnershipConfiguration(
        lease: .seconds(3), renewal: .seconds(1), settle: .milliseconds(300), dwell: .seconds(120), resyncGrace: .seconds(3),
        bidInterval: .milliseconds(500))

    let name: String
    let topics: OwnershipTopics
    let client: MQTTClient
    let coordinator: OwnershipCoordinator
    private let decisionLog = Mutex<[OwnershipDecision]>([])
    private let arrivals: AsyncStream<Void>
    private let arrived: AsyncStream<Void>.Continuation
    private let tasks = Mutex<[Task<Void, Never>]>([])

    /// The client starts connecting at once; its events wait for `start`.
    init(_ name: String, brokerPort: Int) throws {
        self.name = name
        topics = OwnershipTopics(prefix: Self.prefix, gatewayID: name)
        let mqttTopics = MQTTTopics(prefix: Self.prefix, gatewayID: name, discoveryPrefix: "homeassistant")
        let settings = MQTTConnectionSettings(
            host: "127.0.0.1", port: brokerPort, clientID: "wearfleet-\(name)-\(UUID().uuidString.prefix(8))", keepAlive: 5,
            will: MQTTMessage(topic: mqttTopics.gatewayStatus, text: "offline", qos: 1, retain: true),
            subscriptions: topics.subscriptions)
        client = try MQTTClient(
            settings: settings, schedule: MQTTReconnectSchedule(baseDelay: .milliseconds(50), maxDelay: .milliseconds(400)),
            random: SeededRandom(seed: UInt64(name.utf8.reduce(0) { $0 &* 31 &+ UInt64($1) })), logger: Logger(label: "test.\(name)"))
        coordinator = OwnershipCoordinator(topics: topics, configuration: Self.timings, publisher: client, logger: Logger(label: "test.\(name)"))
        (arrivals, arrived) = AsyncStream.makeStream(bufferingPolicy: .bufferingNewest(1))
    }

    /// Starts reading the client's events — through an `MQTTBridge` over `bridgeFleet` when one
    /// is given, as the daemon does — and the coordinator's decisions.
    func start(bridgeFleet: (any FleetCommands)? = nil) {
        let (client, coordinator, arrived) = (client, coordinator, arrived)
        let reader: Task<Void, Never>
        if let bridgeFleet {
            let mqttTopics = MQTTTopics(prefix: Self.prefix, gatewayID: name, discoveryPrefix: "homeassistant")
            let bridge = MQTTBridge(
                client: client, route: MQTTValueRoute(topics: mqttTopics), topics: mqttTopics, homeAssistantDiscovery: false, allowed: [],
                fleet: bridgeFleet, ownership: coordinator,
                logger: Logger(label: "test.\(name)"))
            reader = Task { await bridge.serve(client.events) }
        } else {
            reader = Task { await coordinator.follow(client.events) }
        }
        let fleet = Task {
            for await decision in coordinator.decisions {
                self.decisionLog.withLock { $0.append(decision) }
                switch decision {
                case .acquire(let device): await coordinator.linkChanged(device, linked: true)
                case .release(let device): await coordinator.linkChanged(device, linked: false)
                }
                arrived.yield()
            }
        }
        tasks.withLock { $0 = [reader, fleet] }
    }

    /// Every decision so far, oldest first.
    var decisions: [OwnershipDecision] { decisionLog.withLock { $0 } }

    /// Waits until the coordinator has decided `decision`.
    func waitFor(_ decision: OwnershipDecision, within timeout: Duration = .seconds(30)) async throws {
        if decisions.contains(decision) { return }
        try await withTimeout(timeout, "\(name) to decide \(decision)") {
            for await _ in self.arrivals where self.decisions.contains(decision) { return }
            throw TimedOut(what: "\(self.name) to decide \(decision) (its decisions ended)", after: timeout)
        }
    }

    /// Waits until the coordinator's status satisfies `condition`: the status changes with the
    /// broker's messages, which no stream here announces, so it is looked at every 20 ms.
    @discardableResult
    func waitForStatus(
        _ what: String, within timeout: Duration = .seconds(30), _ condition: @escaping @Sendable (OwnershipStatus) -> Bool
    ) async throws -> OwnershipStatus {
        try await withTimeout(timeout, "\(name): \(what)") {
            while true {
                let status = await self.coordinator.status()
                if condition(status) { return status }
                try await Task.sleep(for: .milliseconds(20))
            }
        }
    }

    /// A clean stop: the coordinator deletes its bids, the client publishes `offline` and
    /// disconnects (no Will).
    func stop() async {
        await coordinator.stop()
        let mqttTopics = MQTTTopics(prefix: Self.prefix, gatewayID: name, discoveryPrefix: "homeassistant")
        await client.stop(final: MQTTMessage(topic: mqttTopics.gatewayStatus, text: "offline", qos: 1, retain: true))
        for task in tasks.withLock({ $0 }) { task.cancel() }
        arrived.finish()
    }

    static func device(_ address: String) throws -> DeviceID { DeviceID(address: try #require(BluetoothAddress(address))) }
}
