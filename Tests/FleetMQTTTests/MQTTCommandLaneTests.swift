import Fleet
import FleetConfiguration
import FleetCore
@testable import FleetMQTT
import GATT
import Logging
import Synchronization
import Testing
import TestSupport

/// The bridge's commands against a real mosquitto: a slow command holds up only its own
/// device's later commands.
@Suite(.serialized) struct MQTTCommandLaneTests {
    /// Writes to `slowDevice` wait until `release` is called; everything else answers at once.
    final class GatedFleet: FleetCommands {
        let slowDevice: DeviceID
        private let gate = Mutex<(open: Bool, waiters: [CheckedContinuation<Void, Never>])>((false, []))
        let calls = Mutex<[String]>([])

        init(slowDevice: DeviceID) { self.slowDevice = slowDevice }

        func release() {
            let waiters = gate.withLock { state in
                state.open = true
                defer { state.waiters.removeAll() }
                return state.waiters
            }
            for waiter in waiters { waiter.resume() }
        }

        private func waitForGate() async {
            await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
                let open = gate.withLock { state -> Bool in
                    if !state.open { state.waiters.append(continuation) }
                    return state.open
                }
                if open { continuation.resume() }
            }
        }

        private func record(_ call: String) { calls.withLock { $0.append(call) } }

        func pin(_ device: DeviceID, options: FleetPinOptions) async throws(FleetCommandError) { record("pin \(device)") }
        func unpin(_ device: DeviceID) async throws(FleetCommandError) { record("unpin \(device)") }
        func disconnect(_ device: DeviceID) async throws(FleetCommandError) { record("disconnect \(device)") }
        func reconnect(_ device: DeviceID) async throws(FleetCommandError) { record("reconnect \(device)") }
        func read(_ device: DeviceID, characteristic: String) async throws(FleetCommandError) -> [UInt8] {
            record("read \(device)")
            return [7]
        }
        func writeAndWait(
            _ device: DeviceID, characteristic: String, bytes: [UInt8], qos: OutgoingQoS?, mode: OutgoingWriteMode, replaceable: Bool,
            budget: Duration
        ) async throws(FleetWriteError) -> FleetWriteOutcome {
            if device == slowDevice { await waitForGate() }
            record("write \(device)")
            return .acknowledged
        }
        func subscribe(_ device: DeviceID, characteristic: String) async throws(FleetCommandError) {}
        func unsubscribe(_ device: DeviceID, characteristic: String) async throws(FleetCommandError) {}
        func nearby(scanning: Duration?) async -> [FleetNearbyDevice] { [] }
        func pair(_ device: DeviceID) async throws(FleetCommandError) {}
        func unpair(_ device: DeviceID) async throws(FleetCommandError) {}
    }

    /// A private broker, a subscriber to the command results, a connected client and a bridge
    /// that lets `allowed` through to a `GatedFleet` whose device C0FFEE000001 is slow.
    struct Lane {
        let broker: PrivateBroker
        let topics: MQTTTopics
        let subscriber: BrokerSubscriber
        let client: MQTTClient
        let slow: DeviceID
        let fleet: GatedFleet
        let route: MQTTValueRoute
        let bridge: MQTTBridge

        /// `subscribed`: the client subscribes to the command topics itself (the broker's commands
        /// reach its events).
        static func start(allowed: Set<MQTTSettings.CommandOp> = [.write, .read], subscribed: Bool = false, seed: UInt64 = 1) async throws -> Lane {
            let broker = try PrivateBroker()
            let topics = MQTTTopics(prefix: "wearfleet", gatewayID: "g", discoveryPrefix: "homeassistant")
            let subscriber = try await BrokerSubscriber(port: broker.port, topics: ["wearfleet/device/+/command/result"])
            let client = try MQTTClient(
                settings: MQTTClientBrokerTests.settings(port: broker.port, subscriptions: subscribed ? [topics.commandFilter] : []),
                random: SeededRandom(seed: seed), logger: Logger(label: "test"))
            try await MQTTClientBrokerTests.connected(client)
            let slow = DeviceID(address: try #require(BluetoothAddress(topicSegment: "C0FFEE000001")))
            let fleet = GatedFleet(slowDevice: slow)
            let route = MQTTValueRoute(topics: topics)
            let bridge = MQTTBridge(
                client: client, route: route, topics: topics, homeAssistantDiscovery: false, allowed: allowed, fleet: fleet,
                logger: Logger(label: "test"))
            return Lane(
                broker: broker, topics: topics, subscriber: subscriber, client: client, slow: slow, fleet: fleet, route: route,
                bridge: bridge)
        }

        /// Ends the route and the client; the broker lives until here.
        func stop() async {
            route.finish()
            await client.stop(final: nil)
            withExtendedLifetime(broker) {}
        }
    }

    @Test func aSlowWriteHoldsUpOnlyItsOwnDevice() async throws {
        let lane = try await Lane.start()
        let (topics, subscriber, slow, fleet, bridge) = (lane.topics, lane.subscriber, lane.slow, lane.fleet, lane.bridge)
        let (events, feed) = AsyncStream<MQTTClient.Event>.makeStream()
        let serving = Task { await bridge.serve(events) }
        func command(_ segment: String, _ json: String) {
            feed.yield(.message(topic: "wearfleet/device/\(segment)/command", payload: Array(json.utf8)))
        }
        command("C0FFEE000001", #"{"id":"w1","op":"write","characteristic":"2a39","hex":"01"}"#)
        command("C0FFEE000001", #"{"id":"r1","op":"read","characteristic":"2a19"}"#)
        command("C0FFEE000002", #"{"id":"r2","op":"read","characteristic":"2a19"}"#)
        // The other device answers while the write waits.
        let other = try await subscriber.first(on: topics.commandResult("C0FFEE000002"))
        #expect(other.payload.contains(#""id":"r2""#) && other.payload.contains(#""ok":true"#))
        #expect(subscriber.all(on: topics.commandResult("C0FFEE000001")).isEmpty)
        // The slow device's commands stay in order: its read runs after its write.
        fleet.release()
        let first = try await subscriber.message(on: topics.commandResult("C0FFEE000001"), skipping: 0)
        let second = try await subscriber.message(on: topics.commandResult("C0FFEE000001"), skipping: 1)
        #expect(first.payload.contains(#""id":"w1""#) && second.payload.contains(#""id":"r1""#))
        #expect(fleet.calls.withLock { $0.filter { $0.hasSuffix("\(slow)") } } == ["write \(slow)", "read \(slow)"])
        feed.finish()
        await serving.value
        await lane.stop()
    }

    @Test func aPinFromTheBrokerNamesTheAddressTypeOfADeviceTheFleetHasNotMet() async throws {
        let lane = try await Lane.start(allowed: [.pin])
        let (topics, subscriber, fleet, bridge) = (lane.topics, lane.subscriber, lane.fleet, lane.bridge)
        let (events, feed) = AsyncStream<MQTTClient.Event>.makeStream()
        let serving = Task { await bridge.serve(events) }
        feed.yield(.message(topic: "wearfleet/device/C47A10000003/command", payload: Array(#"{"id":"p","op":"pin","address_type":"random"}"#.utf8)))
        feed.yield(.message(topic: "wearfleet/device/C47A10000004/command", payload: Array(#"{"id":"q","op":"pin"}"#.utf8)))
        _ = try await subscriber.first(on: topics.commandResult("C47A10000003"))
        _ = try await subscriber.first(on: topics.commandResult("C47A10000004"))
        let pins = Set(fleet.calls.withLock { $0.filter { $0.hasPrefix("pin") } })
        #expect(pins == ["pin C4:7A:10:00:00:03 (random)", "pin C4:7A:10:00:00:04"], "random as asked, public by default: \(pins)")
        feed.finish()
        await serving.value
        await lane.stop()
    }

    /// Beyond `commandsWaitingPerDevice` behind a running one, a command is answered with an
    /// error at once (its id kept) and counted.
    @Test func aFullLaneAnswersAnErrorAndCounts() async throws {
        let lane = try await Lane.start()
        let (topics, subscriber, client, bridge) = (lane.topics, lane.subscriber, lane.client, lane.bridge)
        let write = Array(#"{"id":"w","op":"write","characteristic":"2a39","hex":"01"}"#.utf8)
        // The first starts the lane (no task runs it here, so all stay queued).
        #expect(await bridge.queueCommand(write, for: "C0FFEE000001"))
        for _ in 0..<MQTTBridge.commandsWaitingPerDevice { #expect(await !bridge.queueCommand(write, for: "C0FFEE000001")) }
        #expect(client.counters.dropped == 0)
        #expect(await bridge.queueCommand(Array(#"{"id":"over","op":"read","characteristic":"2a19"}"#.utf8), for: "C0FFEE000001") == false)
        let refused = try await subscriber.first(on: topics.commandResult("C0FFEE000001"))
        #expect(refused.payload.contains(#""id":"over""#) && refused.payload.contains(#""ok":false"#))
        #expect(client.counters.dropped == 1)
        await lane.stop()
    }

    /// Commands the client had no room for (its 1,024-event buffer full, nobody reading) are
    /// answered with an error carrying their id, and counted.
    @Test func commandsDroppedUnreadAreAnswered() async throws {
        let lane = try await Lane.start(allowed: [.read], subscribed: true, seed: 2)
        let (topics, subscriber, client, bridge) = (lane.topics, lane.subscriber, lane.client, lane.bridge)
        await bridge.answerDroppedCommands()
        // Nobody reads the client's events (`connected` took the CONNACK): 1,030 commands
        // overflow its buffer of 1,024 by 6, the oldest (ids 0...5) dropped.
        for n in 0..<1030 {
            client.publish(MQTTMessage(
                topic: "wearfleet/device/C0FFEE000003/command", text: #"{"id":\#(n),"op":"read","characteristic":"2a19"}"#, qos: 1, retain: false))
        }
        let answer = try await subscriber.message(on: topics.commandResult("C0FFEE000003"), skipping: 5)
        #expect(answer.payload.contains(#""ok":false"#) && answer.payload.contains(#""id":5"#))
        #expect(subscriber.all(on: topics.commandResult("C0FFEE000003")).first?.payload.contains(#""id":0,"#) == true)
        #expect(client.counters.dropped >= 6)
        await lane.stop()
    }
}
