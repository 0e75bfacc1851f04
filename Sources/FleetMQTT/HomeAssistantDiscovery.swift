import FleetCore
import GATT

/// Home Assistant MQTT discovery: one retained config per entity under the discovery prefix, that
/// a stock Home Assistant turns into a device with sensors, no YAML needed.
///
/// Each wearable is a device (`identifiers` `wearfleet_<ADDR>`, `via_device` the gateway) whose
/// entities read the daemon's own topics: heart rate, temperature and SpO2 from their value
/// topics (with `expire_after`, so a silent wearable shows unavailable), battery, RSSI and the
/// connection from the retained device state. Every entity is available only while the
/// gateway's status is `online` and, for the measurements, while the device is linked
/// (`availability_mode: all`). The gateway is a device of its own with a connectivity sensor.
struct HomeAssistantDiscovery: Sendable {
    let topics: MQTTTopics

    /// One entity a device gets once the daemon has what it reads.
    struct Sensor: Sendable {
        var object: String
        var name: String
        /// The value kind whose topic it reads; nil reads the device state.
        var kind: String?
        var valueTemplate: String
        var unit: String?
        var deviceClass: String?
        var diagnostic = false
        var expireAfter: Int?
        var icon: String?
        var measurement = true
        /// Available only while the device is linked (a measurement), or whenever the gateway is
        /// (what the state itself says: battery, RSSI, connection).
        var needsLink = true
    }

    static let heartRate = Sensor(
        object: "heart_rate", name: "Heart rate", kind: "heart_rate", valueTemplate: "{{ value_json.value.heart_rate_bpm }}",
        unit: "bpm", expireAfter: 60, icon: "mdi:heart-pulse")
    static let temperature = Sensor(
        object: "temperature", name: "Temperature", kind: "temperature", valueTemplate: "{{ value_json.value.temperature_celsius }}",
        unit: "°C", deviceClass: "temperature", expireAfter: 900)
    static let spo2 = Sensor(
        object: "spo2", name: "SpO2", kind: "spo2", valueTemplate: "{{ value_json.value.spo2_percent }}", unit: "%",
        expireAfter: 120, icon: "mdi:water-percent")
    static let battery = Sensor(
        object: "battery", name: "Battery", kind: nil, valueTemplate: "{{ value_json.battery }}", unit: "%",
        deviceClass: "battery", diagnostic: true, needsLink: false)
    static let rssi = Sensor(
        object: "rssi", name: "RSSI", kind: nil, valueTemplate: "{{ value_json.rssi }}", unit: "dBm",
        deviceClass: "signal_strength", diagnostic: true, needsLink: false)
    static let connection = Sensor(
        object: "connection", name: "Connection", kind: nil, valueTemplate: "{{ value_json.state }}", diagnostic: true,
        icon: "mdi:bluetooth-connect", measurement: false, needsLink: false)

    /// Announced as soon as the device joins; the others once it sent that kind of value.
    static let always = [battery, rssi, connection]
    static let byKind = ["heart_rate": heartRate, "temperature": temperature, "spo2": spo2]

    var gatewayIdentifier: String { "wearfleet_gateway_\(topics.gatewayID)" }
    static func node(_ device: DeviceID) -> String { "wearfleet_\(MQTTTopics.segment(device))" }

    /// The configs `record` should have now, by topic.
    func configs(for record: MQTTDeviceRecord) -> [(topic: String, payload: [UInt8])] {
        var sensors = Self.always
        for kind in record.kinds.sorted() { if let sensor = Self.byKind[kind] { sensors.append(sensor) } }
        return sensors.map { (topic(record.id, $0), config($0, for: record)) }
    }

    /// Every config topic a device may have had: cleared (empty retained) when it is forgotten.
    func allTopics(of device: DeviceID) -> [String] {
        (Self.always + Self.byKind.values.sorted { $0.object < $1.object }).map { topic(device, $0) }
    }

    func topic(_ device: DeviceID, _ sensor: Sensor) -> String {
        topics.discovery(component: "sensor", node: Self.node(device), object: sensor.object)
    }

    func config(_ sensor: Sensor, for record: MQTTDeviceRecord) -> [UInt8] {
        let node = Self.node(record.id)
        var object = JSONObjectWriter(capacity: 1024)
        object.string("name", sensor.name)
        object.string("unique_id", "\(node)_\(sensor.object)")
        object.string("object_id", "\(node)_\(sensor.object)")
        object.string("state_topic", sensor.kind.map { topics.value(record.id, kind: $0, characteristic: "") } ?? topics.state(record.id))
        object.string("value_template", sensor.valueTemplate)
        if let unit = sensor.unit { object.string("unit_of_measurement", unit) }
        if let deviceClass = sensor.deviceClass { object.string("device_class", deviceClass) }
        if sensor.measurement { object.string("state_class", "measurement") }
        if sensor.diagnostic { object.string("entity_category", "diagnostic") }
        if let icon = sensor.icon { object.string("icon", icon) }
        if let expireAfter = sensor.expireAfter { object.integer("expire_after", expireAfter) }
        object.string("availability_mode", "all")
        object.object("device", device(record))
        object.object("origin", origin)
        return Self.appending(key: "availability", json: availability(record.id, needsLink: sensor.needsLink), to: object.finish())
    }

    /// The gateway's own device: a connectivity sensor on its status topic.
    func gatewayConfig() -> (topic: String, payload: [UInt8]) {
        var object = JSONObjectWriter(capacity: 512)
        object.string("name", "Status")
        object.string("unique_id", "\(gatewayIdentifier)_status")
        object.string("state_topic", topics.gatewayStatus)
        object.string("payload_on", "online")
        object.string("payload_off", "offline")
        object.string("device_class", "connectivity")
        object.string("entity_category", "diagnostic")
        var device = JSONObjectWriter(capacity: 160)
        device.strings("identifiers", [gatewayIdentifier])
        device.string("name", "Wearfleet \(topics.gatewayID)")
        device.string("manufacturer", "Wearfleet")
        device.string("model", "wearfleetd")
        object.object("device", device)
        object.object("origin", origin)
        let topic = topics.discovery(component: "binary_sensor", node: gatewayIdentifier, object: "status")
        return (topic, object.finish())
    }

    /// `object` (a finished JSON object) with one more member whose value is `json` as is: the
    /// writer has objects and arrays of strings, not arrays of objects.
    static func appending(key: String, json: [UInt8], to object: [UInt8]) -> [UInt8] {
        var bytes = object
        guard bytes.last == UInt8(ascii: "}") else { return object }
        bytes.removeLast()
        if bytes.count > 1 { bytes.append(UInt8(ascii: ",")) }
        bytes += Array("\"\(key)\":".utf8) + json + [UInt8(ascii: "}")]
        return bytes
    }

    private var origin: JSONObjectWriter {
        var origin = JSONObjectWriter(capacity: 48)
        origin.string("name", "wearfleetd")
        return origin
    }

    private func device(_ record: MQTTDeviceRecord) -> JSONObjectWriter {
        var device = JSONObjectWriter(capacity: 256)
        device.strings("identifiers", [Self.node(record.id)])
        device.string("name", record.name ?? "Wearable \(record.id.address)")
        if let model = record.model { device.string("model", model) }
        if let manufacturer = record.manufacturer { device.string("manufacturer", manufacturer) }
        device.string("via_device", gatewayIdentifier)
        return device
    }

    /// `[gateway status, device state]`: the gateway must be online and, for measurements, the
    /// device linked.
    private func availability(_ device: DeviceID, needsLink: Bool) -> [UInt8] {
        var gateway = JSONObjectWriter(capacity: 96)
        gateway.string("topic", topics.gatewayStatus)
        gateway.string("payload_available", "online")
        gateway.string("payload_not_available", "offline")
        var list = Array("[".utf8) + gateway.finish()
        if needsLink {
            var state = JSONObjectWriter(capacity: 192)
            state.string("topic", topics.state(device))
            state.string(
                "value_template",
                "{{ 'online' if value_json.state in ['ready', 'degraded', 'discovering'] else 'offline' }}")
            state.string("payload_available", "online")
            state.string("payload_not_available", "offline")
            list += Array(",".utf8) + state.finish()
        }
        return list + Array("]".utf8)
    }
}
