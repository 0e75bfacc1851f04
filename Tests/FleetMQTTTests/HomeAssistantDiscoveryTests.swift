import FleetCore
@testable import FleetMQTT
import Foundation
import Testing

@Suite struct HomeAssistantDiscoveryTests {
    static let topics = MQTTTopics(prefix: "wearfleet", gatewayID: "gw1", discoveryPrefix: "homeassistant")
    let discovery = HomeAssistantDiscovery(topics: topics, commands: ["read", "disconnect", "reconnect"], version: "9.8.7")

    private func record(battery: Int? = 80, rssi: Int? = nil) -> MQTTDeviceRecord {
        var record = MQTTDeviceRecord(id: DeviceID(address: BluetoothAddress("C0:FF:EE:00:00:01")!))
        record.name = "Ward watch"
        record.model = "W-1"
        record.manufacturer = "Acme"
        record.kinds = ["heart_rate", "spo2", "temperature", "battery"]
        record.battery = battery
        record.rssi = rssi
        return record
    }

    private func json(_ payload: [UInt8]) throws -> [String: Any] {
        try #require(try JSONSerialization.jsonObject(with: Data(payload)) as? [String: Any])
    }

    @Test func everyConfigHasTheFieldsHomeAssistantNeeds() throws {
        let configs = discovery.configs(for: record())
        #expect(configs.map(\.topic) == [
            "homeassistant/sensor/wearfleet_C0FFEE000001/connection/config", "homeassistant/sensor/wearfleet_C0FFEE000001/battery/config",
            "homeassistant/sensor/wearfleet_C0FFEE000001/heart_rate/config", "homeassistant/sensor/wearfleet_C0FFEE000001/spo2/config",
            "homeassistant/sensor/wearfleet_C0FFEE000001/temperature/config", "homeassistant/button/wearfleet_C0FFEE000001/reconnect/config",
            "homeassistant/switch/wearfleet_C0FFEE000001/hold/config", "homeassistant/button/wearfleet_C0FFEE000001/read_battery/config",
        ])
        for (topic, payload) in configs {
            let config = try json(payload)
            let parts = topic.split(separator: "/")
            let (component, object) = (parts[1], parts[3])
            #expect(config["unique_id"] as? String == "wearfleet_C0FFEE000001_\(object)")
            #expect(config["object_id"] as? String == "wearfleet_C0FFEE000001_\(object)")
            let device = try #require(config["device"] as? [String: Any])
            #expect(device["identifiers"] as? [String] == ["wearfleet_C0FFEE000001"])
            #expect(device["via_device"] as? String == "wearfleet_gateway_gw1")
            #expect(device["model"] as? String == "W-1" && device["manufacturer"] as? String == "Acme" && device["name"] as? String == "Ward watch")
            let availability = try #require(config["availability"] as? [[String: Any]])
            #expect(availability.first?["topic"] as? String == "wearfleet/gateway/gw1/status")
            #expect(config["availability_mode"] as? String == "all")
            #expect((config["origin"] as? [String: Any])?["sw_version"] as? String == "9.8.7")
            if component == "sensor" {
                #expect((config["state_topic"] as? String)?.hasPrefix("wearfleet/device/C0FFEE000001/") == true)
                #expect((config["value_template"] as? String)?.hasPrefix("{{ value_json.") == true)
                // What reads the state survives the empty state of a removal without an error.
                if config["state_topic"] as? String == "wearfleet/device/C0FFEE000001/state" {
                    #expect((config["value_template"] as? String)?.hasSuffix(" if value_json is defined else None }}") == true)
                }
                if object != "connection" { #expect(config["state_class"] as? String == "measurement") }
            } else {
                #expect(config["command_topic"] as? String == "wearfleet/device/C0FFEE000001/command")
                #expect(config["qos"] as? Int == 1)
            }
            if ["heart_rate", "spo2", "temperature", "read_battery"].contains(object) {
                #expect(availability.count == 2, "\(object) is available only while the device is linked")
            } else {
                #expect(availability.count == 1, "\(object) is available whenever the gateway is")
            }
            if ["heart_rate", "spo2", "temperature"].contains(object) { #expect(config["expire_after"] is Int) }
        }
        let battery = try json(configs[1].payload)
        #expect(battery["device_class"] as? String == "battery" && battery["unit_of_measurement"] as? String == "%")
        #expect(battery["entity_category"] as? String == "diagnostic")
    }

    @Test func theConnectionIsAnEnumOfEveryState() throws {
        let connection = try json(try #require(discovery.configs(for: record()).first { $0.topic.hasSuffix("/connection/config") }).payload)
        #expect(connection["device_class"] as? String == "enum")
        #expect(connection["options"] as? [String] == DeviceState.names)
        #expect(connection["state_class"] == nil && connection["unit_of_measurement"] == nil)
    }

    @Test func controlsSendTheDevicesOwnCommands() throws {
        let configs = Dictionary(uniqueKeysWithValues: discovery.configs(for: record()).map { ($0.topic.split(separator: "/")[3], $0.payload) })
        let reconnect = try json(try #require(configs["reconnect"]))
        #expect(reconnect["payload_press"] as? String == #"{"id":"ha-reconnect","op":"reconnect"}"#)
        let hold = try json(try #require(configs["hold"]))
        #expect(hold["payload_on"] as? String == #"{"id":"ha-hold","op":"disconnect"}"#)
        #expect(hold["payload_off"] as? String == #"{"id":"ha-release","op":"reconnect"}"#)
        #expect(hold["state_topic"] as? String == "wearfleet/device/C0FFEE000001/state")
        #expect(hold["value_template"] as? String == "{{ ('ON' if value_json.held else 'OFF') if value_json is defined else None }}")
        let read = try json(try #require(configs["read_battery"]))
        #expect(read["payload_press"] as? String == #"{"id":"ha-read-battery","op":"read","characteristic":"2a19"}"#)
        // Each payload is a request the broker's command parser takes.
        for payload in [reconnect["payload_press"], hold["payload_on"], hold["payload_off"], read["payload_press"]] {
            #expect(throws: Never.self) { try MQTTCommandRequest.parse(Array(try #require(payload as? String).utf8)) }
        }
    }

    @Test func aControlIsAnnouncedOnlyWhenAllowCommandsHasItsOps() {
        func objects(_ commands: Set<String>) -> [Substring] {
            HomeAssistantDiscovery(topics: Self.topics, commands: commands).configs(for: record())
                .filter { !$0.topic.contains("/sensor/") }.map { $0.topic.split(separator: "/")[3] }
        }
        #expect(objects([]) == [])
        #expect(objects(["reconnect"]) == ["reconnect"])
        #expect(objects(["disconnect"]) == [], "the hold switch needs reconnect to be let go")
        #expect(objects(["disconnect", "reconnect"]) == ["reconnect", "hold"])
        #expect(objects(["read"]) == ["read_battery"])
    }

    /// A reload that allows fewer commands starts a new connection: the controls it no longer
    /// permits are withdrawn (an earlier run may have announced them).
    @Test func controlsNoLongerPermittedAreWithdrawn() {
        let readOnly = HomeAssistantDiscovery(topics: Self.topics, commands: ["read"])
        #expect(readOnly.withdrawnControls(of: record().id) == [
            "homeassistant/button/wearfleet_C0FFEE000001/reconnect/config", "homeassistant/switch/wearfleet_C0FFEE000001/hold/config",
        ])
        #expect(discovery.withdrawnControls(of: record().id).isEmpty)
        let noReads = HomeAssistantDiscovery(topics: Self.topics, commands: ["reconnect", "disconnect"])
        #expect(noReads.withdrawnControls(of: record().id) == ["homeassistant/button/wearfleet_C0FFEE000001/read_battery/config"])
    }

    /// A restarted daemon has not read the battery yet: the `Read battery` an earlier run
    /// announced stays (emptying it removed the button from Home Assistant at every restart,
    /// and from a sleeping cuff until its next wake); it is only not announced anew.
    @Test func aPermittedControlWaitingForItsValueIsNotWithdrawn() {
        #expect(!discovery.withdrawnControls(of: record(battery: nil).id).contains { $0.hasSuffix("/read_battery/config") })
        #expect(!discovery.configs(for: record(battery: nil)).contains { $0.topic.hasSuffix("/read_battery/config") })
    }

    @Test func nothingIsAnnouncedBeforeItHasSomethingToShow() {
        var bare = record(battery: nil, rssi: nil)
        bare.kinds = []
        #expect(discovery.configs(for: bare).map { $0.topic.split(separator: "/")[3] } == ["connection", "reconnect", "hold"])
    }

    @Test func rssiIsAnnouncedOnceHeardAndDisabledByDefault() throws {
        let rssi = try #require(discovery.configs(for: record(rssi: -70)).first { $0.topic.hasSuffix("/rssi/config") })
        #expect(try json(rssi.payload)["enabled_by_default"] as? Bool == false)
        // Available only while the device is not linked (no advertisements, no RSSI); a
        // measurement only while it is.
        let availability = try #require(try json(rssi.payload)["availability"] as? [[String: Any]])
        let template = try #require(availability.last?["value_template"] as? String)
        #expect(template.contains("value_json.state not in ['degraded', 'discovering', 'pairing', 'ready']"), "\(template)")
        let heartRate = try #require(discovery.configs(for: record()).first { $0.topic.hasSuffix("/heart_rate/config") })
        let measured = try #require(try json(heartRate.payload)["availability"] as? [[String: Any]])
        #expect((measured.last?["value_template"] as? String)?.contains("value_json.state in ['degraded', 'discovering', 'pairing', 'ready']") == true)
    }

    @Test func aCuffAndAScaleGetTheirMeasurementsAndTheTimeOfTheLastOne() throws {
        var cuff = record()
        cuff.kinds = ["blood_pressure"]
        let objects = discovery.configs(for: cuff).map { String($0.topic.split(separator: "/")[3]) }
        #expect(objects == ["connection", "battery", "systolic", "diastolic", "pulse", "last_measurement", "reconnect", "hold", "read_battery"])
        let last = try #require(discovery.configs(for: cuff).first { $0.topic.hasSuffix("/last_measurement/config") })
        #expect(try json(last.payload)["device_class"] as? String == "timestamp")
        // A measurement stays true while the device sleeps: no link needed, no expiry.
        let systolic = try json(try #require(discovery.configs(for: cuff).first { $0.topic.hasSuffix("/systolic/config") }).payload)
        #expect(systolic["expire_after"] == nil)
        // Read from the retained latest measurement: after Home Assistant restarts while the
        // cuff sleeps, the broker still has it.
        #expect(systolic["state_topic"] as? String == "wearfleet/device/C0FFEE000001/blood_pressure/latest")
        #expect(try json(last.payload)["state_topic"] as? String == "wearfleet/device/C0FFEE000001/blood_pressure/latest")
        let heartRate = try json(try #require(discovery.configs(for: record()).first { $0.topic.hasSuffix("/heart_rate/config") }).payload)
        #expect(heartRate["state_topic"] as? String == "wearfleet/device/C0FFEE000001/heart_rate", "a stream is not kept")
        var scale = record()
        scale.kinds = ["weight"]
        let weight = try json(try #require(discovery.configs(for: scale).first { $0.topic.hasSuffix("/weight/config") }).payload)
        #expect(weight["unit_of_measurement"] as? String == "kg" && weight["device_class"] as? String == "weight")
        // A strap's stream has no "last measurement".
        #expect(!discovery.configs(for: record()).contains { $0.topic.hasSuffix("/last_measurement/config") })
    }

    @Test func theGatewayCarriesTheDaemonsVersion() throws {
        let gateway = try json(discovery.gatewayConfig().payload)
        #expect((gateway["device"] as? [String: Any])?["sw_version"] as? String == "9.8.7")
    }

    @Test func aForgottenDeviceClearsEveryConfigItCouldHave() {
        var full = record(rssi: -60)
        full.kinds.formUnion(["blood_pressure", "weight"])
        #expect(Set(discovery.allTopics(of: full.id)) == Set(discovery.configs(for: full).map(\.topic)))
    }
}

@Suite struct MQTTDeviceRecordTests {
    @Test func stateJSONHasTheDocumentedKeysInOrder() {
        var record = MQTTDeviceRecord(id: DeviceID(address: BluetoothAddress("C0:FF:EE:00:00:01")!))
        // What the templates read is there while unknown, as null.
        #expect(String(decoding: record.stateJSON(gateway: "gw1"), as: UTF8.self)
            == #"{"device":"C0:FF:EE:00:00:01","state":null,"rssi":null,"pinned":false,"held":false,"gateway":"gw1","battery":null}"#)
        record.state = "backingOff"
        record.reason = "transient"
        record.adapter = AdapterID("hci0")
        record.rssi = -61
        record.pinned = true
        record.held = true
        record.className = "watch"
        record.name = "W"
        record.session = "12-3"
        record.lastValueAt = Date(timeIntervalSince1970: 1_795_549_412.75)
        record.battery = 87
        #expect(String(decoding: record.stateJSON(gateway: "gw1"), as: UTF8.self) == """
            {"device":"C0:FF:EE:00:00:01","state":"backingOff","reason":"transient","adapter":"hci0","rssi":-61,"pinned":true,"held":true,\
            "class":"watch","name":"W","gateway":"gw1","session":"12-3","last_value_time":"2026-11-24T19:43:32Z","battery":87}
            """)
    }

    /// BlueZ measures RSSI from advertisements only and a linked device does not advertise: the
    /// RSSI last heard before the link is not shown as the device's current one.
    @Test func aLinkedDevicesStateHasNoRSSI() {
        var record = MQTTDeviceRecord(id: DeviceID(address: BluetoothAddress("C0:FF:EE:00:00:01")!))
        record.rssi = -61
        for state in DeviceState.names {
            record.state = state
            let json = String(decoding: record.stateJSON(gateway: "gw1"), as: UTF8.self)
            let linked = ["discovering", "pairing", "ready", "degraded"].contains(state)
            #expect(json.contains(#""rssi":null"#) == linked, "\(state): \(json)")
            #expect(json.contains(#""rssi":-61"#) == !linked, "\(state): \(json)")
        }
    }
}
