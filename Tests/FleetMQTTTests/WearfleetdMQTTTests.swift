import BlueZSimulator
import Foundation
import Testing
import TestSupport

/// wearfleetd on a private broker, end to end: what a subscriber and Home Assistant see, commands,
/// the Will, a broker restart.
@Suite("wearfleetd on MQTT", .serialized)
struct WearfleetdMQTTTests {
    @Test func valuesStateDiscoveryAndCommandsReachTheBroker() async throws {
        let broker = try PrivateBroker()
        let subscriber = try await BrokerSubscriber(port: broker.port, topics: ["wearfleet/#", "homeassistant/#"])
        let daemon = try await MQTTDaemon(broker: broker)
        let watch = "wearfleet/device/\(MQTTDaemon.watchSegment)"

        let online = try await subscriber.first(on: "wearfleet/gateway/gw1/status")
        #expect(online.payload == "online")

        // A heart-rate value with the documented JSON.
        let heartRate = try jsonObject(try await subscriber.first(on: "\(watch)/heart_rate", within: .seconds(30)).payload)
        #expect(heartRate["kind"] as? String == "heart_rate")
        #expect(heartRate["device"] as? String == MQTTDaemon.watch)
        #expect(heartRate["name"] as? String == "Ward watch")
        #expect(heartRate["characteristic"] as? String == "00002a37-0000-1000-8000-00805f9b34fb")
        #expect((heartRate["value"] as? [String: Any])?["heart_rate_bpm"] is NSNumber)
        #expect(heartRate["time"] is String && heartRate["hex"] is String)
        // The journal's SESSION_ID: this run's number, then the device's session.
        #expect((heartRate["session"] as? String)?.wholeMatch(of: /[0-9]+-[0-9]+/) != nil, "\(heartRate["session"] ?? "none")")

        // The retained state once ready.
        let ready = try await subscriber.first(on: "\(watch)/state", within: .seconds(30)) { $0.payload.contains("\"state\":\"ready\"") }
        let state = try jsonObject(ready.payload)
        #expect(state["adapter"] as? String == "hci0" && state["pinned"] as? Bool == true && state["class"] as? String == "watch")
        #expect(state["name"] as? String == "Ward watch" && state["gateway"] as? String == "gw1")
        #expect((state["session"] as? String)?.wholeMatch(of: /[0-9]+-[0-9]+/) != nil, "\(state["session"] ?? "none")")

        // Home Assistant's config for the heart rate sensor.
        let config = try jsonObject(
            try await subscriber.first(on: "homeassistant/sensor/wearfleet_\(MQTTDaemon.watchSegment)/heart_rate/config", within: .seconds(30)).payload)
        #expect(config["unique_id"] as? String == "wearfleet_\(MQTTDaemon.watchSegment)_heart_rate")
        #expect(config["state_topic"] as? String == "\(watch)/heart_rate")
        #expect(config["value_template"] as? String == "{{ value_json.value.heart_rate_bpm }}")
        #expect(config["unit_of_measurement"] as? String == "bpm" && config["state_class"] as? String == "measurement")
        #expect(config["expire_after"] as? Int == 60)
        let availability = try #require(config["availability"] as? [[String: Any]])
        #expect(availability.map { $0["topic"] as? String } == ["wearfleet/gateway/gw1/status", "\(watch)/state"])
        #expect(config["availability_mode"] as? String == "all")
        let device = try #require(config["device"] as? [String: Any])
        #expect(device["identifiers"] as? [String] == ["wearfleet_\(MQTTDaemon.watchSegment)"])
        #expect(device["via_device"] as? String == "wearfleet_gateway_gw1" && device["name"] as? String == "Ward watch")
        let battery = try jsonObject(
            try await subscriber.first(on: "homeassistant/sensor/wearfleet_\(MQTTDaemon.watchSegment)/battery/config", within: .seconds(30)).payload)
        #expect(battery["device_class"] as? String == "battery" && battery["state_topic"] as? String == "\(watch)/state")

        // Home Assistant's birth message brings every config again.
        let heartRateConfig = "homeassistant/sensor/wearfleet_\(MQTTDaemon.watchSegment)/heart_rate/config"
        let sentBefore = subscriber.all(on: heartRateConfig).count
        try publish(port: broker.port, topic: "homeassistant/status", "online")
        _ = try await subscriber.first(on: "homeassistant/status")
        try await daemon.line(containing: "Home Assistant is online; sending discovery again")
        let resent = try await subscriber.message(on: heartRateConfig, skipping: sentBefore)
        #expect(try jsonObject(resent.payload)["unique_id"] as? String == "wearfleet_\(MQTTDaemon.watchSegment)_heart_rate")

        // An allowed write reaches the simulator and its result comes back with the same id.
        let band = "wearfleet/device/\(MQTTDaemon.bandSegment)"
        _ = try await subscriber.first(on: "\(band)/state", within: .seconds(30)) { $0.payload.contains("\"state\":\"ready\"") }
        let writesBefore = await daemon.simulator.counterSnapshot().writesReceived[MQTTDaemon.band, default: 0]
        try publish(
            port: broker.port, topic: "\(band)/command",
            #"{"id":"w1","op":"write","characteristic":"7a1e0003-3c6f-4b8d-9e2a-5d0c8f6b1a40","hex":"0102","mode":"request"}"#)
        let written = try jsonObject(try await subscriber.first(on: "\(band)/command/result", within: .seconds(20)) { $0.payload.contains(#""id":"w1""#) }.payload)
        // With response: answered once the band acknowledged it, so the simulator has it already.
        #expect(written["id"] as? String == "w1" && written["ok"] as? Bool == true && written["write"] as? String == "acknowledged")
        #expect(await daemon.simulator.counterSnapshot().writesReceived[MQTTDaemon.band, default: 0] == writesBefore + 1)

        // An allowed read answers with the bytes read.
        try publish(port: broker.port, topic: "\(watch)/command", #"{"id":"r1","op":"read","characteristic":"2A19"}"#)
        let read = try jsonObject(try await subscriber.first(on: "\(watch)/command/result") { $0.payload.contains(#""id":"r1""#) }.payload)
        #expect(read["ok"] as? Bool == true && (read["hex"] as? String)?.count == 2)

        // Refused: an op not allowed, malformed JSON, an unknown op, a bad argument.
        try publish(port: broker.port, topic: "\(band)/command", #"{"id":7,"op":"disconnect"}"#)
        let refused = try jsonObject(try await subscriber.first(on: "\(band)/command/result") { $0.payload.contains(#""id":7"#) }.payload)
        #expect(refused["id"] as? Int == 7 && refused["ok"] as? Bool == false)
        #expect((refused["error"] as? String)?.contains("not allowed") == true)
        try publish(port: broker.port, topic: "\(band)/command", "{not json")
        let malformed = try jsonObject(try await subscriber.first(on: "\(band)/command/result") { !$0.payload.contains(#""id""#) }.payload)
        #expect(malformed["ok"] as? Bool == false && malformed["error"] as? String == "not a JSON object")
        try publish(port: broker.port, topic: "\(band)/command", #"{"id":"u","op":"explode"}"#)
        let unknown = try jsonObject(try await subscriber.first(on: "\(band)/command/result") { $0.payload.contains(#""id":"u""#) }.payload)
        #expect(unknown["id"] as? String == "u" && (unknown["error"] as? String)?.hasPrefix("unknown op") == true)
        try publish(port: broker.port, topic: "\(band)/command", #"{"id":"b","op":"write","characteristic":"7a1e0003-3c6f-4b8d-9e2a-5d0c8f6b1a40","hex":"0g"}"#)
        let badArgument = try jsonObject(try await subscriber.first(on: "\(band)/command/result") { $0.payload.contains(#""id":"b""#) }.payload)
        #expect(badArgument["id"] as? String == "b" && badArgument["ok"] as? Bool == false)
        // None of them changed anything: the band is still linked.
        #expect(await daemon.simulator.counterSnapshot().linkDrops[MQTTDaemon.band, default: 0] == 0)

        // A clean stop leaves `offline` retained.
        #expect(await daemon.stop() == 0)
        _ = try await subscriber.first(on: "wearfleet/gateway/gw1/status") { $0.payload == "offline" }
        let retained = try await BrokerSubscriber(port: broker.port, topics: ["wearfleet/gateway/gw1/status"]).first(on: "wearfleet/gateway/gw1/status")
        #expect(retained.payload == "offline" && retained.retained)
        await daemon.simulator.stop()
    }

    @Test func aKilledDaemonIsMarkedOfflineByItsWill() async throws {
        let broker = try PrivateBroker()
        let subscriber = try await BrokerSubscriber(port: broker.port, topics: ["wearfleet/gateway/#"])
        let daemon = try await MQTTDaemon(broker: broker)
        #expect(try await subscriber.first(on: "wearfleet/gateway/gw1/status").payload == "online")
        daemon.child.signal(SIGKILL)
        _ = try await subscriber.first(on: "wearfleet/gateway/gw1/status") { $0.payload == "offline" }
        await daemon.simulator.stop()
    }

    @Test func aBrokerOutageLeavesTheLinksAloneAndARestartGetsTheRetainedStateBack() async throws {
        let broker = try PrivateBroker()
        let daemon = try await MQTTDaemon(broker: broker)
        let watch = "wearfleet/device/\(MQTTDaemon.watchSegment)"
        do {
            let subscriber = try await BrokerSubscriber(port: broker.port, topics: ["\(watch)/state"])
            _ = try await subscriber.first(on: "\(watch)/state", within: .seconds(30)) { $0.payload.contains("\"state\":\"ready\"") }
        }
        try await daemon.line(containing: "mqtt: connected")
        let before = await daemon.simulator.counterSnapshot()

        broker.stop()
        try await daemon.line(containing: "mqtt: lost the broker")
        // Values keep coming from the watch while the broker is away.
        let notified = before.notificationsSent[MQTTDaemon.watch, default: 0]
        try await withTimeout(.seconds(10), "more notifications during the outage") {
            while await daemon.simulator.counterSnapshot().notificationsSent[MQTTDaemon.watch, default: 0] < notified + 5 {
                await Task.yield()
            }
        }
        try broker.restart()  // without persistence: the broker lost what it retained
        let late = try await BrokerSubscriber(port: broker.port, topics: ["\(watch)/state", "wearfleet/gateway/gw1/status", "homeassistant/#"])
        _ = try await late.first(on: "\(watch)/state", within: .seconds(30))
        try await daemon.line(containing: "mqtt: connected", count: 2)
        // Republished on the reconnection, so retained again for whoever subscribes now.
        let state = try await BrokerSubscriber(port: broker.port, topics: ["\(watch)/state"]).first(on: "\(watch)/state")
        #expect(state.retained && state.payload.contains("\"state\":\"ready\""))
        // The links were never touched.
        let after = await daemon.simulator.counterSnapshot()
        #expect(after.linkDrops == before.linkDrops)
        #expect(after.connectAttempts == before.connectAttempts)
        #expect(await daemon.stop() == 0)
        await daemon.simulator.stop()
    }
}

@Suite("wearfleetd's MQTT reload", .serialized)
struct WearfleetdMQTTReloadTests {
    /// A reload that changes [mqtt] reconnects under the new prefix without touching a BLE link;
    /// a device the reload forgets has its retained state and Home Assistant configs deleted.
    @Test func aReloadReconnectsWithNewSettingsAndAForgottenDeviceLeavesHomeAssistant() async throws {
        let broker = try PrivateBroker()
        let subscriber = try await BrokerSubscriber(port: broker.port, topics: ["wearfleet/#", "site/#", "homeassistant/#"])
        let daemon = try await MQTTDaemon(broker: broker)
        let band = MQTTDaemon.bandSegment
        _ = try await subscriber.first(on: "wearfleet/device/\(band)/state", within: .seconds(30)) { $0.payload.contains("\"state\":\"ready\"") }
        _ = try await subscriber.first(on: "wearfleet/device/\(MQTTDaemon.watchSegment)/state", within: .seconds(30)) { $0.payload.contains("\"state\":\"ready\"") }
        let before = await daemon.simulator.counterSnapshot()

        // The band is no longer pinned, and the topics move under `site`.
        var toml = try String(contentsOfFile: daemon.configPath, encoding: .utf8)
        let bandPin = "[[pinned]]\naddress = \"\(MQTTDaemon.band)\"\nname = \"Band\"\nclass = \"band\"\n"
        #expect(toml.contains(bandPin))
        toml = toml.replacingOccurrences(of: bandPin, with: "").replacingOccurrences(of: "gateway_id = \"gw1\"", with: "gateway_id = \"gw1\"\ntopic_prefix = \"site\"")
        toml += "\n[pool]\nenabled = false\n"
        try toml.write(toFile: daemon.configPath, atomically: true, encoding: .utf8)
        daemon.child.signal(SIGHUP)
        try await daemon.line(containing: "configuration reloaded")

        _ = try await subscriber.first(on: "wearfleet/gateway/gw1/status") { $0.payload == "offline" }
        _ = try await subscriber.first(on: "site/gateway/gw1/status") { $0.payload == "online" }
        do {
            _ = try await subscriber.first(on: "homeassistant/sensor/wearfleet_\(band)/battery/config") { $0.payload.isEmpty }
        } catch {
            // What the broker passed on for the band, and what the daemon logged: for the record.
            for message in subscriber.received where message.topic.contains(band) {
                print("reload test: \(message.topic) \(message.payload.isEmpty ? "(empty)" : "\(message.payload.count) bytes")")
            }
            try? await daemon.line(containing: "\u{0}", within: .seconds(2))
            for line in daemon.linesSeen(containing: "") { print("reload test: wearfleetd: \(line)") }
            throw error
        }
        // The watch stays, published under `site`; its retained state under the old prefix goes.
        let watch = MQTTDaemon.watchSegment
        _ = try await subscriber.first(on: "site/device/\(watch)/state") { $0.payload.contains("\"state\":\"ready\"") }
        _ = try await subscriber.first(on: "wearfleet/device/\(watch)/state") { $0.payload.isEmpty }
        // The watch kept its link through the reload.
        let after = await daemon.simulator.counterSnapshot()
        #expect(after.connectAttempts[MQTTDaemon.watch, default: 0] == before.connectAttempts[MQTTDaemon.watch, default: 0])
        #expect(after.linkDrops[MQTTDaemon.watch, default: 0] == before.linkDrops[MQTTDaemon.watch, default: 0])
        #expect(await daemon.stop() == 0)
        await daemon.simulator.stop()
    }

    /// A reload that moves the topic prefix while a cuff sleeps: its newest measurement is
    /// retained under the new names at once (the cuff measures again only at its next wake; until
    /// then Home Assistant's readings, which read `…/latest`, would be `unknown`).
    @Test func aReloadThatMovesThePrefixCarriesASleepingCuffsLatestMeasurement() async throws {
        let broker = try PrivateBroker()
        let cuff = "AA:BB:CC:00:29:21"
        let segment = cuff.filter { $0 != ":" }
        let subscriber = try await BrokerSubscriber(port: broker.port, topics: ["wearfleet/#", "site/#"])
        let daemon = try await MQTTDaemon(
            broker: broker,
            others: [DeviceSpec(kind: .bloodPressureCuff, address: cuff, addressType: "public", bonded: true, wake: .onDemand(), records: 1)],
            tail: """
                [classes.cuff]
                subscribe = ["2A35"]
                required_services = ["1810"]
                bond = true
                intermittent = true

                [[pinned]]
                address = "\(cuff)"
                name = "cuff"
                class = "cuff"
                """)
        _ = try await subscriber.first(on: "wearfleet/device/\(segment)/state", within: .seconds(30)) { $0.payload.contains("\"state\":\"asleep\"") }
        #expect(await daemon.simulator.wake(address: cuff))
        let latest = try await subscriber.first(on: "wearfleet/device/\(segment)/blood_pressure/latest", within: .seconds(60)) { !$0.payload.isEmpty }

        var toml = try String(contentsOfFile: daemon.configPath, encoding: .utf8)
        toml = toml.replacingOccurrences(of: "gateway_id = \"gw1\"", with: "gateway_id = \"gw1\"\ntopic_prefix = \"site\"")
        try toml.write(toFile: daemon.configPath, atomically: true, encoding: .utf8)
        daemon.child.signal(SIGHUP)
        try await daemon.line(containing: "configuration reloaded")

        let moved = try await subscriber.first(on: "site/device/\(segment)/blood_pressure/latest") { !$0.payload.isEmpty }
        #expect(moved.payload == latest.payload)
        let retained = try await BrokerSubscriber(port: broker.port, topics: ["site/device/\(segment)/blood_pressure/latest"])
            .first(on: "site/device/\(segment)/blood_pressure/latest")
        #expect(retained.retained && retained.payload == latest.payload)
        _ = try await subscriber.first(on: "wearfleet/device/\(segment)/blood_pressure/latest") { $0.payload.isEmpty }
        // Carried, not measured again: the cuff gave one record.
        #expect(await daemon.simulator.counterSnapshot().recordsTaken[cuff, default: 0] == 1)
        #expect(await daemon.stop() == 0)
        await daemon.simulator.stop()
    }
}
