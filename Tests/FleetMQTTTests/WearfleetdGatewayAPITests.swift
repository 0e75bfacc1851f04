import BlueZSimulator
import Foundation
import Testing
import TestSupport

/// The gateway API (`wearfleet/gateway/gw1/info`, `devices`, `event`) and what Home Assistant
/// reads of a device's role, against the real daemon and a private broker.
@Suite("wearfleetd's gateway API on MQTT", .serialized)
struct WearfleetdGatewayAPITests {
    static let info = "wearfleet/gateway/gw1/info"
    static let devices = "wearfleet/gateway/gw1/devices"
    static let event = "wearfleet/gateway/gw1/event"

    @Test func infoDevicesAndEventsFollowTheFleetAndHoldAndRoleReachTheState() async throws {
        let broker = try PrivateBroker()
        let subscriber = try await BrokerSubscriber(port: broker.port, topics: ["wearfleet/#"])
        let daemon = try await MQTTDaemon(broker: broker, allowCommands: ["read", "disconnect", "reconnect", "nearby"])
        let band = "wearfleet/device/\(MQTTDaemon.bandSegment)"
        let watch = "wearfleet/device/\(MQTTDaemon.watchSegment)"

        // `online` goes out after every device's first state (a restart must not make the
        // previous run's retained states available again before they are current).
        let online = try await subscriber.first(on: "wearfleet/gateway/gw1/status") { $0.payload == "online" }
        let received = subscriber.received
        let onlineIndex = try #require(received.firstIndex { $0.topic == online.topic && $0.payload == "online" })
        for topic in ["\(band)/state", "\(watch)/state"] {
            let stateIndex = try #require(received.firstIndex { $0.topic == topic }, "\(topic) before online")
            #expect(stateIndex < onlineIndex)
        }

        // `info`: what the gateway is, nothing secret; new again once bluetoothd and its
        // adapter are known; retained for whoever subscribes later.
        let infoMessage = try await subscriber.first(on: Self.info) { $0.payload.contains(#""adapters":[{"#) }
        let retainedInfo = try await BrokerSubscriber(port: broker.port, topics: [Self.info]).first(on: Self.info)
        #expect(retainedInfo.retained && retainedInfo.payload.contains(#""bluetoothd":true"#))
        let info = try jsonObject(infoMessage.payload)
        #expect(info["gateway"] as? String == "gw1" && (info["version"] as? String)?.isEmpty == false)
        let adapters = try #require(info["adapters"] as? [[String: Any]])
        #expect(adapters.first?["id"] as? String == "hci0" && adapters.first?["slots"] as? Int == 5)
        #expect(info["commands"] as? [String] == ["disconnect", "nearby", "read", "reconnect"])
        let configuration = try #require(info["configuration"] as? [String: Any])
        #expect(configuration["pool"] as? Bool == true && configuration["topic_prefix"] as? String == "wearfleet")
        #expect(!infoMessage.payload.contains("password") && !infoMessage.payload.contains("username"))

        // `devices`: both pinned straps, ready.
        let listed = try await subscriber.first(on: Self.devices) { message in
            message.payload.components(separatedBy: "\"state\":\"ready\"").count == 3
        }
        let entries = try #require(try JSONSerialization.jsonObject(with: Data(listed.payload.utf8)) as? [[String: Any]])
        #expect(entries.map { $0["address"] as? String } == [MQTTDaemon.watch, MQTTDaemon.band])
        #expect(entries.allSatisfy { $0["role"] as? String == "pinned" && $0["address_type"] as? String == "public" && $0["held"] as? Bool == false })

        // `nearby` as a gateway request, after a short scan: both straps are the fleet's, so
        // nothing else is heard.
        try publish(port: broker.port, topic: "wearfleet/gateway/gw1/request/nearby", #"{"transaction":"n1","scan":1}"#)
        let nearby = try jsonObject(try await subscriber.first(on: "wearfleet/gateway/gw1/response/nearby").payload)
        #expect(nearby["transaction"] as? String == "n1" && nearby["status"] as? String == "ok", "\(nearby)")
        #expect((nearby["data"] as? [String: Any])?["devices"] as? [Any] != nil)
        #expect(((nearby["data"] as? [String: Any])?["devices"] as? [Any])?.isEmpty == true)

        // Home Assistant's hold switch: disconnect holds the band, the state says so, and an
        // event tells it; reconnect lets it go.
        try publish(port: broker.port, topic: "\(band)/command", #"{"id":"ha-hold","op":"disconnect"}"#)
        let held = try jsonObject(try await subscriber.first(on: "\(band)/command/result") { $0.payload.contains(#""id":"ha-hold""#) }.payload)
        #expect(held["ok"] as? Bool == true)
        _ = try await subscriber.first(on: "\(band)/state") { $0.payload.contains(#""held":true"#) }
        let heldEvent = try jsonObject(try await subscriber.first(on: Self.event) { $0.payload.contains("device_held") }.payload)
        #expect((heldEvent["data"] as? [String: Any])?["address"] as? String == MQTTDaemon.band)
        let statesWhileHeld = subscriber.all(on: "\(band)/state").count
        try publish(port: broker.port, topic: "\(band)/command", #"{"id":"ha-release","op":"reconnect"}"#)
        _ = try await subscriber.first(on: Self.event) { $0.payload.contains("device_released") }
        _ = try await Self.message(on: "\(band)/state", after: statesWhileHeld, of: subscriber) {
            $0.payload.contains(#""state":"ready""#) && $0.payload.contains(#""held":false"#)
        }

        // A reload that unpins the band while the pool is on: it stays, as a pool device, and
        // its state says so at once.
        var toml = try String(contentsOfFile: daemon.configPath, encoding: .utf8)
        let bandPin = "[[pinned]]\naddress = \"\(MQTTDaemon.band)\"\nname = \"Band\"\nclass = \"band\"\n"
        #expect(toml.contains(bandPin))
        toml = toml.replacingOccurrences(of: bandPin, with: "")
        try toml.write(toFile: daemon.configPath, atomically: true, encoding: .utf8)
        daemon.child.signal(SIGHUP)
        try await daemon.line(containing: "configuration reloaded")
        _ = try await subscriber.first(on: "\(band)/state") { $0.payload.contains(#""pinned":false"#) }
        let unpinned = try jsonObject(try await subscriber.first(on: Self.event) { $0.payload.contains("device_unpinned") }.payload)
        #expect((unpinned["data"] as? [String: Any])?["role"] as? String == "pool")
        _ = try await subscriber.first(on: Self.devices) { message in
            message.payload.contains(#""address":"\#(MQTTDaemon.band)","address_type":"public","name":"Band","role":"pool""#)
        }
        #expect(await daemon.stop() == 0)
        await daemon.simulator.stop()
    }

    /// `nearby` as a gateway request names what the radio hears outside the fleet, each with every
    /// field a user needs to pin it: a strap in hand, heard during the bounded scan.
    @Test func nearbyOverTheBrokerListsAStrapOutsideTheFleetWithEveryField() async throws {
        let broker = try PrivateBroker()
        let subscriber = try await BrokerSubscriber(port: broker.port, topics: ["wearfleet/gateway/gw1/#"])
        let spare = "C4:7A:10:00:00:09"
        let daemon = try await MQTTDaemon(
            broker: broker, allowCommands: ["nearby"],
            others: [DeviceSpec(kind: .heartRateStrap, address: spare, addressType: "random", name: "HRM-Spare", bonded: false)],
            tail: "[pool]\nenabled = false\n")
        _ = try await subscriber.first(on: "wearfleet/gateway/gw1/status") { $0.payload == "online" }
        // Asked until the spare is among the answer (the simulated radio hears it within a scan).
        var found: [String: Any]?
        for attempt in 1...5 where found == nil {
            try publish(port: broker.port, topic: "wearfleet/gateway/gw1/request/nearby", #"{"transaction":\#(attempt),"scan":2}"#)
            let answer = try jsonObject(
                try await subscriber.first(on: "wearfleet/gateway/gw1/response/nearby") { $0.payload.contains(#""transaction":\#(attempt),"#) }.payload)
            #expect(answer["status"] as? String == "ok", "\(answer)")
            let devices = (answer["data"] as? [String: Any])?["devices"] as? [[String: Any]] ?? []
            #expect(!devices.contains { [MQTTDaemon.watch, MQTTDaemon.band].contains($0["address"] as? String ?? "") }, "the fleet's are not nearby")
            found = devices.first { $0["address"] as? String == spare }
        }
        let strap = try #require(found, "the spare strap heard")
        #expect(strap["address_type"] as? String == "random")
        #expect(strap["name"] as? String == "HRM-Spare")
        #expect(strap["rssi"] is Int)
        #expect((strap["last_report_seconds"] as? Double).map { $0 >= 0 } == true)
        #expect((strap["services"] as? [String])?.contains("0000180d-0000-1000-8000-00805f9b34fb") == true, "\(strap)")
        #expect(strap["adapters"] as? [String] == ["hci0"])
        #expect(strap["connected"] as? Bool == false && strap["paired"] as? Bool == false)
        #expect(strap["pool_class"] == nil, "the pool is off: no class it would match (FleetNearbyTests has the pool's): \(strap)")
        _ = await daemon.stop()
    }

    /// The first message on `topic` after the first `count` that satisfies `predicate`.
    static func message(
        on topic: String, after count: Int, of subscriber: BrokerSubscriber, _ predicate: (BrokerSubscriber.Received) -> Bool
    ) async throws -> BrokerSubscriber.Received {
        var skipping = count
        while true {
            let message = try await subscriber.message(on: topic, skipping: skipping)
            if predicate(message) { return message }
            skipping += 1
        }
    }

    /// A device that leaves the fleet has its Home Assistant configs deleted before its state, so
    /// no template ever reads an empty state; the gateway says it was forgotten.
    @Test func aRemovedDeviceLosesItsConfigsBeforeItsState() async throws {
        let broker = try PrivateBroker()
        let subscriber = try await BrokerSubscriber(port: broker.port, topics: ["wearfleet/#", "homeassistant/#"])
        let daemon = try await MQTTDaemon(broker: broker, allowCommands: ["read", "disconnect", "reconnect"])
        let band = MQTTDaemon.bandSegment
        _ = try await subscriber.first(on: "homeassistant/sensor/wearfleet_\(band)/connection/config", within: .seconds(30))
        _ = try await subscriber.first(on: "wearfleet/device/\(band)/state", within: .seconds(30)) { $0.payload.contains("\"state\":\"ready\"") }
        // The gateway's device is announced before any wearable that names it as `via_device`.
        let announced = subscriber.received
        let gatewayIndex = try #require(announced.firstIndex { $0.topic == "homeassistant/binary_sensor/wearfleet_gateway_gw1/status/config" })
        #expect(announced.indices.filter { announced[$0].topic.contains("/wearfleet_C0FFEE") }.allSatisfy { $0 > gatewayIndex })

        var toml = try String(contentsOfFile: daemon.configPath, encoding: .utf8)
        toml = toml.replacingOccurrences(of: "[[pinned]]\naddress = \"\(MQTTDaemon.band)\"\nname = \"Band\"\nclass = \"band\"\n", with: "")
        toml += "\n[pool]\nenabled = false\n"
        try toml.write(toFile: daemon.configPath, atomically: true, encoding: .utf8)
        daemon.child.signal(SIGHUP)
        let cleared = try await subscriber.first(on: "wearfleet/device/\(band)/state") { $0.payload.isEmpty }
        // The operator's doing (its pin taken out of the file, the pool off): forgotten, and why.
        let forgotten = try await subscriber.first(on: Self.event) { $0.payload.contains("device_forgotten") }
        #expect(forgotten.payload.hasPrefix(#"{"type":"device_forgotten","reason":"unpinned_by_configuration","data":{"address":"\#(MQTTDaemon.band)""#), "\(forgotten.payload)")
        let received = subscriber.received
        let stateIndex = try #require(received.firstIndex { $0.topic == cleared.topic && $0.payload.isEmpty })
        let configs = received.enumerated().filter { $0.element.topic.hasPrefix("homeassistant/") && $0.element.topic.contains("wearfleet_\(band)/") }
        let deletions = configs.filter { $0.element.payload.isEmpty }
        #expect(!deletions.isEmpty)
        #expect(deletions.allSatisfy { $0.offset < stateIndex }, "every config deleted before the state")
        // Every config the band had is deleted.
        let announcedConfigs = Set(configs.filter { !$0.element.payload.isEmpty }.map(\.element.topic))
        #expect(announcedConfigs.isSubset(of: Set(deletions.map(\.element.topic))))
        #expect(await daemon.stop() == 0)
        await daemon.simulator.stop()
    }
}
