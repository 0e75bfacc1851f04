import Fleet
import FleetConfiguration
import FleetCore
@testable import FleetMQTT
import Logging
import Testing
import TestSupport

/// A reload that replaces the MQTT connection must not lose a device the fleet removed while
/// neither connection's feed listened: the new connection deletes its retained topics, where the
/// old connection had them too when the reload moved them.
@Suite(.serialized) struct MQTTBridgeHandoverTests {
    static let topics = MQTTTopics(prefix: "wearfleet", gatewayID: "g", discoveryPrefix: "homeassistant")

    @Test func aDeviceRemovedBetweenTwoConnectionsHasItsRetainedTopicsDeleted() async throws {
        let lane = try await MQTTCommandLaneTests.Lane.start()
        let removed = lane.slow
        let kept = DeviceID(address: try #require(BluetoothAddress(topicSegment: "C0FFEE000002")))
        let subscriber = try await BrokerSubscriber(port: lane.broker.port, topics: ["wearfleet/#", "homeassistant/#"])
        let bridge = Self.bridge(on: lane, discovery: true)

        // The fleet now has only `kept`; the connection before had both, on the same topics.
        await bridge.start(
            status: FleetStatus(bluetoothdPresent: true, devices: [Self.status(kept)], adapters: []), earlier: Self.handover([removed, kept], topics: Self.topics, homeAssistantDiscovery: true))
        try await Self.sent(lane, subscriber)

        for topic in HomeAssistantDiscovery(topics: Self.topics).allTopics(of: removed) + [Self.topics.state(removed)] {
            #expect(subscriber.all(on: topic).map(\.payload) == [""], "\(topic)")
        }
        // The device still in the fleet is published, never deleted, and so is the gateway's
        // device (same names, discovery still on).
        #expect(!subscriber.all(on: Self.topics.state(kept)).isEmpty)
        #expect(subscriber.all(on: Self.topics.state(kept)).allSatisfy { !$0.payload.isEmpty })
        let gateway = HomeAssistantDiscovery(topics: Self.topics).gatewayConfig().topic
        #expect(subscriber.all(on: gateway).count == 1)
        #expect(subscriber.all(on: gateway).allSatisfy { !$0.payload.isEmpty })
        await lane.stop()
    }

    @Test func aReloadThatMovedTheTopicsDeletesTheOldOnesToo() async throws {
        let lane = try await MQTTCommandLaneTests.Lane.start()
        let removed = lane.slow
        let old = MQTTTopics(prefix: "site", gatewayID: "g", discoveryPrefix: "ha-old")
        let subscriber = try await BrokerSubscriber(port: lane.broker.port, topics: ["wearfleet/#", "site/#", "homeassistant/#", "ha-old/#"])
        let bridge = Self.bridge(on: lane, discovery: true)

        await bridge.start(status: FleetStatus(bluetoothdPresent: true, devices: [], adapters: []), earlier: Self.handover([removed], topics: old, homeAssistantDiscovery: true))
        try await Self.sent(lane, subscriber)

        let everyTopic = [Self.topics.state(removed), old.state(removed)]
            + HomeAssistantDiscovery(topics: Self.topics).allTopics(of: removed) + HomeAssistantDiscovery(topics: old).allTopics(of: removed)
            + [HomeAssistantDiscovery(topics: old).gatewayConfig().topic]
        for topic in everyTopic {
            #expect(subscriber.all(on: topic).map(\.payload) == [""], "\(topic)")
        }
        await lane.stop()
    }

    /// Discovery turned off by a reload: every config it had announced goes (the staying device's,
    /// the removed one's, the gateway's device), or Home Assistant keeps those entities for good;
    /// the states stay.
    @Test func aReloadThatTurnedDiscoveryOffDeletesTheConfigsItHadAnnounced() async throws {
        let lane = try await MQTTCommandLaneTests.Lane.start()
        let removed = lane.slow
        let kept = DeviceID(address: try #require(BluetoothAddress(topicSegment: "C0FFEE000002")))
        let subscriber = try await BrokerSubscriber(port: lane.broker.port, topics: ["wearfleet/#", "homeassistant/#"])
        let bridge = Self.bridge(on: lane, discovery: false)

        await bridge.start(
            status: FleetStatus(bluetoothdPresent: true, devices: [Self.status(kept)], adapters: []),
            earlier: Self.handover([removed, kept], topics: Self.topics, homeAssistantDiscovery: true))
        try await Self.sent(lane, subscriber)

        let discovery = HomeAssistantDiscovery(topics: Self.topics)
        for topic in discovery.allTopics(of: kept) + discovery.allTopics(of: removed) + [discovery.gatewayConfig().topic] {
            #expect(subscriber.all(on: topic).map(\.payload) == [""], "\(topic)")
        }
        #expect(!subscriber.all(on: Self.topics.state(kept)).isEmpty)
        #expect(subscriber.all(on: Self.topics.state(kept)).allSatisfy { !$0.payload.isEmpty })
        // The removed device's configs go before its state: a config whose state topic is
        // already empty makes Home Assistant's templates fail.
        let order = subscriber.received.map(\.topic)
        let lastConfig = try #require(discovery.allTopics(of: removed).compactMap { order.firstIndex(of: $0) }.max())
        let state = try #require(order.firstIndex(of: Self.topics.state(removed)))
        #expect(lastConfig < state)
        await lane.stop()
    }

    /// A new gateway id (or discovery prefix) is a new gateway device in Home Assistant: the old
    /// one's config is deleted and the new one's published; the old id's `info` and `devices`
    /// go too (its status stays `offline`, the old connection's last word).
    @Test func aReloadThatMovedTheGatewayIDDeletesTheOldGatewayDevice() async throws {
        let lane = try await MQTTCommandLaneTests.Lane.start()
        let old = MQTTTopics(prefix: "wearfleet", gatewayID: "old", discoveryPrefix: "homeassistant")
        let subscriber = try await BrokerSubscriber(port: lane.broker.port, topics: ["wearfleet/#", "homeassistant/#"])
        let bridge = Self.bridge(on: lane, discovery: true)

        await bridge.start(
            status: FleetStatus(bluetoothdPresent: true, devices: [], adapters: []),
            earlier: Self.handover([], topics: old, homeAssistantDiscovery: true))
        try await Self.sent(lane, subscriber)

        let oldGateway = HomeAssistantDiscovery(topics: old).gatewayConfig().topic
        let newGateway = HomeAssistantDiscovery(topics: Self.topics).gatewayConfig().topic
        #expect(oldGateway != newGateway)
        #expect(subscriber.all(on: oldGateway).map(\.payload) == [""])
        #expect(subscriber.all(on: newGateway).count == 1)
        #expect(subscriber.all(on: newGateway).allSatisfy { !$0.payload.isEmpty })
        for topic in [old.gatewayInfo, old.gatewayDevices] {
            #expect(subscriber.all(on: topic).map(\.payload) == [""], "\(topic)")
        }
        await lane.stop()
    }

    /// A reload keeps the links, so no value teaches the new connection again before the next
    /// one: what the old connection learned (battery, model, kinds) goes on in the staying
    /// device's state and configs, under the new names too.
    @Test func aReloadKeepsWhatTheValuesTaughtTheOldConnection() async throws {
        let lane = try await MQTTCommandLaneTests.Lane.start()
        let kept = DeviceID(address: try #require(BluetoothAddress(topicSegment: "C0FFEE000002")))
        let old = MQTTTopics(prefix: "wearfleet", gatewayID: "old", discoveryPrefix: "homeassistant")
        let subscriber = try await BrokerSubscriber(port: lane.broker.port, topics: ["wearfleet/#", "homeassistant/#"])
        let bridge = Self.bridge(on: lane, discovery: true, allowed: [.read])
        var learned = MQTTDeviceRecord(id: kept)
        learned.battery = 87
        learned.model = "HRM-Pro"
        learned.kinds = ["battery", "heart_rate"]

        await bridge.start(
            status: FleetStatus(bluetoothdPresent: true, devices: [Self.status(kept)], adapters: []),
            earlier: MQTTBridge.Handover(records: [kept: learned], topics: old, homeAssistantDiscovery: true))
        try await Self.sent(lane, subscriber)

        let state = try #require(subscriber.all(on: Self.topics.state(kept)).last)
        #expect(state.payload.contains(#""battery":87"#), "\(state.payload)")
        let discovery = HomeAssistantDiscovery(topics: Self.topics, commands: ["read"])
        for topic in [discovery.topic(kept, HomeAssistantDiscovery.battery), discovery.topic(kept, HomeAssistantDiscovery.heartRate),
                      discovery.topic(kept, HomeAssistantDiscovery.readBattery)] {
            let config = try #require(subscriber.all(on: topic).last, "\(topic)")
            #expect(!config.payload.isEmpty, "\(topic)")
            // Announced through the new gateway, not the old one.
            #expect(config.payload.contains("wearfleet_gateway_g"), "\(topic)")
        }
        #expect(subscriber.all(on: discovery.topic(kept, HomeAssistantDiscovery.battery)).last?.payload.contains("HRM-Pro") == true)
        await lane.stop()
    }

    /// Waits until everything the client published so far reached the subscriber: a marker sent
    /// after it on the same connection arrives after it.
    static func sent(_ lane: MQTTCommandLaneTests.Lane, _ subscriber: BrokerSubscriber) async throws {
        lane.client.publish(MQTTMessage(topic: "wearfleet/test/marker", text: "end", qos: 1, retain: false))
        _ = try await subscriber.first(on: "wearfleet/test/marker")
    }

    /// What the replaced connection handed over: `devices`, with nothing learned of them.
    static func handover(_ devices: [DeviceID], topics: MQTTTopics, homeAssistantDiscovery: Bool) -> MQTTBridge.Handover {
        MQTTBridge.Handover(
            records: Dictionary(uniqueKeysWithValues: devices.map { ($0, MQTTDeviceRecord(id: $0)) }), topics: topics,
            homeAssistantDiscovery: homeAssistantDiscovery)
    }

    /// The connection a reload starts: the lane's client, under `topics`.
    static func bridge(
        on lane: MQTTCommandLaneTests.Lane, discovery: Bool, allowed: Set<MQTTSettings.CommandOp> = []
    ) -> MQTTBridge {
        MQTTBridge(
            client: lane.client, route: lane.route, topics: topics, homeAssistantDiscovery: discovery, allowed: allowed, fleet: lane.fleet,
            logger: Logger(label: "test"))
    }

    static func status(_ id: DeviceID) -> FleetStatus.Device {
        FleetStatus.Device(id: id, name: "Kept", pinned: true, className: "default", state: .idle)
    }
}
