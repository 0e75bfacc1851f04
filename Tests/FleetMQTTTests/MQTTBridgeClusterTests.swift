import Fleet
import FleetConfiguration
import FleetCore
@testable import FleetMQTT
import Logging
import Testing
import TestSupport

/// What one gateway's bridge writes to the broker when several gateways share the fleet: its
/// `online` only once it knows which devices are its own, never another gateway's Home
/// Assistant configs, the topics of a device nobody owns when it leaves the fleet, and the
/// owner beside each device in the gateway API's `devices`.
@Suite(.serialized) struct MQTTBridgeClusterTests {
    static let topics = MQTTTopics(prefix: "wearfleet", gatewayID: "g", discoveryPrefix: "homeassistant")

    struct Gateway {
        let lane: MQTTCommandLaneTests.Lane
        let subscriber: BrokerSubscriber
        let bridge: MQTTBridge
        let strap: DeviceID

        /// A bridge of gateway `g` in a cluster (its coordinator is never connected: the test
        /// tells the bridge who owns what, as the ownership link does), with every op allowed.
        static func start(allowed: Set<MQTTSettings.CommandOp> = Set(MQTTSettings.CommandOp.allCases)) async throws -> Gateway {
            let lane = try await MQTTCommandLaneTests.Lane.start()
            let subscriber = try await BrokerSubscriber(port: lane.broker.port, topics: ["wearfleet/#", "homeassistant/#"])
            let coordinator = OwnershipCoordinator(
                topics: OwnershipTopics(MQTTBridgeClusterTests.topics), publisher: lane.client, logger: Logger(label: "test"))
            let bridge = MQTTBridge(
                client: lane.client, route: lane.route, topics: MQTTBridgeClusterTests.topics, homeAssistantDiscovery: true,
                allowed: allowed, fleet: lane.fleet, ownership: coordinator, logger: Logger(label: "test"))
            return Gateway(lane: lane, subscriber: subscriber, bridge: bridge, strap: lane.slow)
        }

        var status: FleetStatus {
            FleetStatus(
                bluetoothdPresent: true,
                devices: [FleetStatus.Device(id: strap, name: "Strap", pinned: true, className: "default", state: .connecting(adapter: nil))],
                adapters: [])
        }

        /// Waits until everything published so far reached the subscriber: a marker of its own
        /// (each wait's, so that an earlier one does not answer) sent after it on the same connection.
        func sent() async throws {
            let token = "\(UInt64.random(in: 0 ... .max))"
            lane.client.publish(MQTTMessage(topic: "wearfleet/test/marker", text: token, qos: 1, retain: false))
            _ = try await subscriber.first(on: "wearfleet/test/marker") { $0.payload == token }
        }
        func payloads(on topic: String) -> [String] { subscriber.all(on: topic).map(\.payload) }
    }

    /// A restarted gateway of a cluster does not know yet which devices are its own: `online`
    /// before that would make the previous run's retained `ready` available again. It goes out
    /// once the coordinator is past its resync grace, after the owned devices' states.
    @Test func onlineWaitsUntilTheGatewayKnowsWhatItOwns() async throws {
        let gateway = try await Gateway.start()
        let statusTopic = Self.topics.gatewayStatus
        await gateway.bridge.start(status: gateway.status)
        await gateway.bridge.noteOwners([gateway.strap: "g"], settled: false)
        try await gateway.sent()
        #expect(gateway.payloads(on: statusTopic).isEmpty, "not online while the claims the broker kept may be unheard")
        #expect(!gateway.payloads(on: Self.topics.state(gateway.strap)).isEmpty, "an owned device's state is published")

        await gateway.bridge.noteOwners([gateway.strap: "g"], settled: true)
        try await gateway.sent()
        #expect(gateway.payloads(on: statusTopic) == ["online"])
        // Every message on the broker's connection is in order: the state came first.
        let order = gateway.subscriber.received.map(\.topic)
        let stateAt = try #require(order.firstIndex(of: Self.topics.state(gateway.strap)))
        let onlineAt = try #require(order.firstIndex(of: statusTopic))
        #expect(stateAt < onlineAt)
        await gateway.bridge.noteOwners([gateway.strap: "g"], settled: true)
        try await gateway.sent()
        #expect(gateway.payloads(on: statusTopic) == ["online"], "once")
        await gateway.lane.stop()
    }

    /// Another gateway owns the strap: starting this one empties none of the strap's configs
    /// (a restart used to empty every control the start's record lacked — another gateway's
    /// `Read battery` among them, which that gateway never published again).
    @Test func aStartingGatewayEmptiesNoConfigOfADeviceAnotherGatewayOwns() async throws {
        let gateway = try await Gateway.start(allowed: [.read])
        await gateway.bridge.start(status: gateway.status)
        await gateway.bridge.noteOwners([gateway.strap: "other"], settled: true)
        try await gateway.sent()
        for topic in HomeAssistantDiscovery(topics: Self.topics).allTopics(of: gateway.strap) {
            #expect(gateway.payloads(on: topic).isEmpty, "\(topic)")
        }
        #expect(gateway.payloads(on: Self.topics.state(gateway.strap)).isEmpty)

        // Given to this gateway, it withdraws what `allow_commands` does not permit here.
        await gateway.bridge.noteOwners([gateway.strap: "g"], settled: true)
        try await gateway.sent()
        let discovery = HomeAssistantDiscovery(topics: Self.topics)
        #expect(gateway.payloads(on: discovery.topic(gateway.strap, HomeAssistantDiscovery.reconnect)) == [""])
        #expect(gateway.payloads(on: discovery.topic(gateway.strap, HomeAssistantDiscovery.readBattery)).isEmpty, "permitted: kept")
        await gateway.lane.stop()
    }

    /// A device nobody live owns (its owner let it go, or died) has nobody to delete its retained
    /// topics: the gateway that removes it from its fleet does, configs first.
    @Test func aDeviceNobodyOwnsIsDeletedByTheGatewayThatRemovesIt() async throws {
        let gateway = try await Gateway.start()
        await gateway.bridge.start(status: gateway.status)
        await gateway.bridge.noteOwners([:], settled: true)
        await gateway.bridge.handle(.fleet(.deviceRemoved(gateway.strap, reason: .unpinnedByConfiguration)))
        try await gateway.sent()
        let configs = HomeAssistantDiscovery(topics: Self.topics).allTopics(of: gateway.strap)
        for topic in configs + [Self.topics.state(gateway.strap)] {
            #expect(gateway.payloads(on: topic) == [""], "\(topic)")
        }
        let order = gateway.subscriber.received.map(\.topic)
        let lastConfig = try #require(configs.compactMap { order.lastIndex(of: $0) }.max())
        #expect(try #require(order.lastIndex(of: Self.topics.state(gateway.strap))) > lastConfig, "configs before the state")
        await gateway.lane.stop()
    }

    /// Removed before the coordinator heard what the broker kept (its resync grace): "no owner"
    /// may be a claim still unheard, so the removal waits; settled, it goes ahead only if nobody
    /// owns the device (a reviewer's case: a restarted gateway emptying a live one's topics).
    @Test func aRemovalBeforeTheGatewayKnowsTheOwnersWaitsForThem() async throws {
        let configs = HomeAssistantDiscovery(topics: Self.topics)
        // Owned by another: its. Nobody, or this gateway itself (its own claim from before a
        // restart, heard in the grace): deleted here.
        for owner in ["other", nil, "g"] as [String?] {
            let gateway = try await Gateway.start()
            await gateway.bridge.start(status: gateway.status)
            await gateway.bridge.noteOwners([:], settled: false)
            await gateway.bridge.handle(.fleet(.deviceRemoved(gateway.strap, reason: .unpinnedByConfiguration)))
            try await gateway.sent()
            let topics = configs.allTopics(of: gateway.strap) + [Self.topics.state(gateway.strap)]
            for topic in topics { #expect(gateway.payloads(on: topic).isEmpty, "\(topic) before the owners are known") }
            await gateway.bridge.noteOwners(owner.map { [gateway.strap: $0] } ?? [:], settled: true)
            try await gateway.sent()
            for topic in topics {
                #expect(gateway.payloads(on: topic) == (owner == "other" ? [] : [""]), "owner \(owner ?? "none"): \(topic)")
            }
            await gateway.lane.stop()
        }
    }

    @Test func aDeviceAnotherLiveGatewayOwnsIsLeftToIt() async throws {
        let gateway = try await Gateway.start()
        await gateway.bridge.start(status: gateway.status)
        await gateway.bridge.noteOwners([gateway.strap: "other"], settled: true)
        await gateway.bridge.handle(.fleet(.deviceRemoved(gateway.strap, reason: .unpinnedByConfiguration)))
        try await gateway.sent()
        for topic in HomeAssistantDiscovery(topics: Self.topics).allTopics(of: gateway.strap) + [Self.topics.state(gateway.strap)] {
            #expect(gateway.payloads(on: topic).isEmpty, "\(topic)")
        }
        await gateway.lane.stop()
    }

    /// The gateway's `devices` says who owns each device: its state there is this gateway's view.
    @Test func devicesNamesEachDevicesOwner() async throws {
        let gateway = try await Gateway.start()
        await gateway.bridge.start(status: gateway.status)
        await gateway.bridge.noteOwners([gateway.strap: "other"], settled: true)
        await gateway.bridge.publishDevices()
        try await gateway.sent()
        let devices = try #require(gateway.payloads(on: Self.topics.gatewayDevices).last)
        #expect(devices.contains(#""owner":"other""#), "\(devices)")
        await gateway.bridge.noteOwners([:], settled: true)
        await gateway.bridge.publishDevices()
        try await gateway.sent()
        #expect(gateway.payloads(on: Self.topics.gatewayDevices).last?.contains(#""owner":null"#) == true)
        await gateway.lane.stop()
    }
}
