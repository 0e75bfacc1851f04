import Fleet
import FleetConfiguration
import FleetCore
@testable import FleetMQTT
import Logging
import Testing
import TestSupport

/// A reload that replaces the MQTT connection must not lose a device the fleet removed while
/// neither connection's feed listened: the new connection deletes its retained topics.
@Suite(.serialized) struct MQTTBridgeHandoverTests {
    @Test func aDeviceRemovedBetweenTwoConnectionsHasItsRetainedTopicsDeleted() async throws {
        let lane = try await MQTTCommandLaneTests.Lane.start()
        let topics = MQTTTopics(prefix: "wearfleet", gatewayID: "g", discoveryPrefix: "homeassistant")
        let removed = lane.slow
        let kept = DeviceID(address: try #require(BluetoothAddress(topicSegment: "C0FFEE000002")))
        let subscriber = try await BrokerSubscriber(port: lane.broker.port, topics: ["wearfleet/device/#", "homeassistant/#"])
        let bridge = MQTTBridge(
            client: lane.client, route: lane.route, topics: topics, homeAssistantDiscovery: true, allowed: [], fleet: lane.fleet,
            logger: Logger(label: "test"))

        // The fleet now has only `kept`; the connection before had both.
        await bridge.start(devices: [Self.status(kept)], earlier: [removed, kept])

        let battery = HomeAssistantDiscovery(topics: topics).allTopics(of: removed).filter { $0.hasSuffix("/battery/config") }
        #expect(battery.count == 1)
        for topic in battery + [topics.state(removed)] {
            let cleared = try await subscriber.first(on: topic)
            #expect(cleared.payload.isEmpty)
        }
        // The device still in the fleet is published, not deleted.
        let state = try await subscriber.first(on: topics.state(kept))
        #expect(state.payload.contains(#""state""#))
        #expect(subscriber.all(on: topics.state(kept)).allSatisfy { !$0.payload.isEmpty })
        await lane.stop()
    }

    static func status(_ id: DeviceID) -> FleetStatus.Device {
        FleetStatus.Device(id: id, name: "Kept", pinned: true, className: "default", state: .idle)
    }
}
