import Fleet
import FleetCore
import FleetMQTT
import Foundation
import Logging
import ProcessSupport
import Testing
import TestSupport

/// The client against a real mosquitto on a loopback port, read by a real mosquitto_sub.
@Suite(.serialized) struct MQTTClientBrokerTests {
    static func settings(port: Int, will: MQTTMessage? = nil, subscriptions: [String] = []) -> MQTTConnectionSettings {
        MQTTConnectionSettings(
            host: "127.0.0.1", port: port, clientID: "wearfleet-test-\(UUID().uuidString.prefix(8))", keepAlive: 5, will: will,
            subscriptions: subscriptions)
    }

    static func connected(_ client: MQTTClient) async throws {
        _ = try await client.events.first(within: .seconds(10), "the broker's CONNACK") { $0 == .connected }
    }

    @Test func publishedMessagesReachASubscriberWithTheirRetainFlag() async throws {
        let broker = try PrivateBroker()
        let subscriber = try await BrokerSubscriber(port: broker.port, topics: ["t/#"])
        let client = try MQTTClient(settings: Self.settings(port: broker.port), random: SeededRandom(seed: 1), logger: Logger(label: "test"))
        try await Self.connected(client)
        client.publish(MQTTMessage(topic: "t/state", text: "{\"state\":\"ready\"}", qos: 1, retain: true))
        client.publish(MQTTMessage(topic: "t/value", text: "72", qos: 0, retain: false))
        let state = try await subscriber.first(on: "t/state")
        let value = try await subscriber.first(on: "t/value")
        #expect(state.payload == "{\"state\":\"ready\"}")
        #expect(value.payload == "72" && !value.retained)
        #expect(client.counters.connected)
        #expect(client.counters.published == 2)
        await client.stop(final: nil)
        #expect(!client.counters.connected)
    }

    @Test func aCleanStopPublishesTheFinalMessageAndNotTheWill() async throws {
        let broker = try PrivateBroker()
        let subscriber = try await BrokerSubscriber(port: broker.port, topics: ["gw/status"])
        let will = MQTTMessage(topic: "gw/status", text: "lost", qos: 1, retain: true)
        let client = try MQTTClient(settings: Self.settings(port: broker.port, will: will), random: SeededRandom(seed: 2), logger: Logger(label: "test"))
        try await Self.connected(client)
        client.publish(MQTTMessage(topic: "gw/status", text: "online", qos: 1, retain: true))
        #expect(try await subscriber.first(on: "gw/status").payload == "online")
        await client.stop(final: MQTTMessage(topic: "gw/status", text: "offline", qos: 1, retain: true))
        _ = try await subscriber.first(on: "gw/status") { $0.payload == "offline" }
        // A fresh subscriber sees the retained `offline`, not the Will's `lost`.
        let late = try await BrokerSubscriber(port: broker.port, topics: ["gw/status"])
        let retained = try await late.first(on: "gw/status")
        #expect(retained.payload == "offline" && retained.retained)
    }

    /// A stop right after a burst of QoS 1 messages (a reload forgetting a device empties some 20
    /// retained topics, then the old connection ends) delivers every one of them, then the final
    /// message: libmosquitto holds back what exceeds its in-flight window until PUBACKs come, and
    /// a DISCONNECT written before then would lose the rest — a forgotten device's configs left
    /// retained, or the gateway's `offline` lost.
    @Test func aStopAfterABurstDeliversEveryMessageThenTheFinalOne() async throws {
        let broker = try PrivateBroker()
        let client = try MQTTClient(settings: Self.settings(port: broker.port), random: SeededRandom(seed: 4), logger: Logger(label: "test"))
        try await Self.connected(client)
        let burst = 120
        for index in 0..<burst {
            client.publish(MQTTMessage(topic: "burst/\(index)", text: "\(index)", qos: 1, retain: true))
        }
        await client.stop(final: MQTTMessage(topic: "burst/status", text: "offline", qos: 1, retain: true))
        // What the broker kept: a fresh subscriber is sent every retained message at once.
        let late = try await BrokerSubscriber(port: broker.port, topics: ["burst/#"])
        let status = try await late.first(on: "burst/status", within: .seconds(30))
        #expect(status.payload == "offline")
        for index in 0..<burst {
            _ = try await late.first(on: "burst/\(index)", within: .seconds(30))
        }
        #expect(Set(late.received.map(\.topic)).count == burst + 1)
    }

    /// A stop while libmosquitto is still writing a large message (the socket full): what waits
    /// behind it is still sent. The old stop flushed once, and a flush hands nothing over while
    /// libmosquitto has bytes to write — every message waiting was lost, and the final one sent.
    @Test func aStopWhileTheSocketIsFullStillSendsWhatWaits() async throws {
        let broker = try PrivateBroker()
        let client = try MQTTClient(settings: Self.settings(port: broker.port), random: SeededRandom(seed: 6), logger: Logger(label: "test"))
        try await Self.connected(client)
        // Outside what the late subscriber reads: its line would take mosquitto_sub and the
        // test's reader a while on a loaded machine.
        client.publish(MQTTMessage(topic: "bulk/large", payload: [UInt8](repeating: 0x41, count: 8 << 20), qos: 1, retain: true))
        for index in 0..<10 {
            client.publish(MQTTMessage(topic: "full/\(index)", text: "\(index)", qos: 1, retain: true))
        }
        await client.stop(final: MQTTMessage(topic: "full/status", text: "offline", qos: 1, retain: true))
        let late = try await BrokerSubscriber(port: broker.port, topics: ["full/#"])
        #expect(try await late.first(on: "full/status", within: .seconds(30)).payload == "offline")
        for index in 0..<10 {
            _ = try await late.first(on: "full/\(index)", within: .seconds(30))
        }
    }

    /// A broker that acknowledges nothing while the client stops (the relay drops what it sends):
    /// the final `offline` waits behind the full in-flight window, where a DISCONNECT would lose
    /// it and suppress the Will, leaving `online` retained. The client closes without DISCONNECT
    /// instead, and the broker publishes the Will.
    @Test func aStopTheBrokerDoesNotAcknowledgeLeavesTheWillToSayOffline() async throws {
        let broker = try PrivateBroker()
        let relay = try SeverableRelay(toPort: broker.port)
        defer { relay.sever() }
        let will = MQTTMessage(topic: "gw/status", text: "offline", qos: 1, retain: true)
        let client = try MQTTClient(settings: Self.settings(port: relay.port, will: will), random: SeededRandom(seed: 5), logger: Logger(label: "test"))
        try await Self.connected(client)
        let subscriber = try await BrokerSubscriber(port: broker.port, topics: ["gw/#"])
        client.publish(MQTTMessage(topic: "gw/status", text: "online", qos: 1, retain: true))
        _ = try await subscriber.first(on: "gw/status") { $0.payload == "online" }
        relay.dropReplies()
        for index in 0..<40 {
            client.publish(MQTTMessage(topic: "gw/burst/\(index)", text: "\(index)", qos: 1, retain: true))
        }
        // The window's 20 reach the broker; their PUBACKs do not come back. (19 when the PUBACK
        // of `online` was still in the relay: the broker sends it after the subscriber's copy.)
        _ = try await subscriber.first(on: "gw/burst/18")
        #expect(await client.stop(final: MQTTMessage(topic: "gw/status", text: "offline", qos: 1, retain: true)))
        _ = try await subscriber.first(on: "gw/status", within: .seconds(30)) { $0.payload == "offline" }
        let retained = try await BrokerSubscriber(port: broker.port, topics: ["gw/status"]).first(on: "gw/status")
        #expect(retained.payload == "offline" && retained.retained)
    }

    @Test func aBrokerRestartIsFollowedByAReconnectAndTheRetainedStateAgain() async throws {
        let broker = try PrivateBroker()
        let client = try MQTTClient(
            settings: Self.settings(port: broker.port), schedule: MQTTReconnectSchedule(baseDelay: .milliseconds(50), maxDelay: .milliseconds(400)),
            random: SeededRandom(seed: 3), logger: Logger(label: "test"))
        try await Self.connected(client)
        client.publish(MQTTMessage(topic: "dev/A/state", text: "ready", qos: 1, retain: true))
        _ = try await BrokerSubscriber(port: broker.port, topics: ["dev/#"]).first(on: "dev/A/state")

        try broker.restart()  // without persistence: the retained state is gone from the broker
        _ = try await client.events.first(within: .seconds(10), "the reconnection") { $0 == .connected }
        let late = try await BrokerSubscriber(port: broker.port, topics: ["dev/#"])
        let republished = try await late.first(on: "dev/A/state")
        #expect(republished.payload == "ready" && republished.retained)
        #expect(client.counters.reconnects >= 1)
        await client.stop(final: nil)
    }

    @Test func whileTheBrokerIsDownValuesAreBoundedAndDropsCounted() async throws {
        let broker = try PrivateBroker()
        let client = try MQTTClient(
            settings: Self.settings(port: broker.port), capacity: 100,
            schedule: MQTTReconnectSchedule(baseDelay: .milliseconds(50), maxDelay: .milliseconds(200)),
            random: SeededRandom(seed: 4), logger: Logger(label: "test"))
        try await Self.connected(client)
        broker.stop()
        _ = try await client.events.first(within: .seconds(10), "the loss") { if case .disconnected = $0 { true } else { false } }
        let publishedBefore = client.counters.published
        for n in 0..<1_000 { client.publish(MQTTMessage(topic: "dev/A/heart_rate", text: "\(n)", qos: 0, retain: false)) }
        client.publish(MQTTMessage(topic: "dev/A/state", text: "ready", qos: 1, retain: true))
        #expect(client.waiting == 101)
        #expect(client.counters.dropped == 900)
        #expect(!client.counters.connected)

        try broker.restart()
        let subscriber = try await BrokerSubscriber(port: broker.port, topics: ["dev/A/state"])
        _ = try await client.events.first(within: .seconds(10), "the reconnection") { $0 == .connected }
        #expect(try await subscriber.first(on: "dev/A/state").payload == "ready")
        try await withTimeout(.seconds(10), "the queue to drain") { while client.waiting > 0 { await Task.yield() } }
        #expect(client.counters.published >= publishedBefore + 101)
        await client.stop(final: nil)
    }
}
