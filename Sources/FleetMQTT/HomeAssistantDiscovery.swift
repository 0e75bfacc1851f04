import FleetCore
import GATT

/// Home Assistant MQTT discovery: one retained config per entity under the discovery prefix, that
/// a stock Home Assistant turns into a device with sensors and controls, no YAML needed.
///
/// Each wearable is a device (`identifiers` `wearfleet_<ADDR>`, `via_device` the gateway). An
/// entity is announced only once it has something to show, so none stays `unknown`: the
/// connection (an `enum` of the device states) at once, a measurement once the device sent that
/// kind of value, the battery once its level is known, the RSSI (disabled by default: BlueZ
/// reports it only from advertisements, so it is available only while the device is not linked)
/// once heard. Every template
/// reads a key the state always carries (`null` while unknown), so Home Assistant has nothing to
/// warn about. The controls — a `Reconnect` button, a `Hold disconnected` switch, a `Read
/// battery` button — are announced only for the ops `allow_commands` permits, and publish the
/// device's own commands (`<prefix>/device/<ADDR>/command`). Every entity is available only
/// while the gateway's status is `online` and, for the measurements and reads, while the device
/// is linked (`availability_mode: all`). The gateway is a device of its own with a connectivity
/// sensor and the daemon's version.
struct HomeAssistantDiscovery: Sendable {
    let topics: MQTTTopics
    /// The ops the broker may send (`allow_commands`): a control is announced only when its
    /// commands are among them.
    let commands: Set<String>
    /// The daemon's version, the gateway device's `sw_version`.
    let version: String

    init(topics: MQTTTopics, commands: Set<String> = [], version: String = "") {
        self.topics = topics
        self.commands = commands
        self.version = version
    }

    /// One sensor a device gets once the daemon has what it reads.
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
        /// (what the state itself says: battery, connection).
        var needsLink = true
        /// Available only while the device is not linked (the advertised RSSI).
        var needsNoLink = false
        /// An `enum` sensor's states.
        var options: [String]? = nil
        var enabledByDefault = true
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
        object: "battery", name: "Battery", kind: nil, valueTemplate: stateTemplate("value_json.battery"), unit: "%",
        deviceClass: "battery", diagnostic: true, needsLink: false)
    static let rssi = Sensor(
        object: "rssi", name: "RSSI", kind: nil, valueTemplate: stateTemplate("value_json.rssi"), unit: "dBm",
        deviceClass: "signal_strength", diagnostic: true, needsLink: false, needsNoLink: true, enabledByDefault: false)
    static let connection = Sensor(
        object: "connection", name: "Connection", kind: nil, valueTemplate: stateTemplate("value_json.state"), deviceClass: "enum",
        diagnostic: true, icon: "mdi:bluetooth-connect", measurement: false, needsLink: false, options: DeviceState.names)

    // A cuff's and a scale's measurements come once per wake and stay true while the device
    // sleeps: available whenever the gateway is, never expiring. Each value template renders
    // only a number (a scale's `unsuccessful` weight renders `None`, unknown).
    static let systolic = Sensor(
        object: "systolic", name: "Systolic", kind: "blood_pressure", valueTemplate: millimetresOfMercury("systolic"),
        unit: "mmHg", deviceClass: nil, icon: "mdi:heart-pulse", needsLink: false)
    static let diastolic = Sensor(
        object: "diastolic", name: "Diastolic", kind: "blood_pressure", valueTemplate: millimetresOfMercury("diastolic"),
        unit: "mmHg", deviceClass: nil, icon: "mdi:heart-pulse", needsLink: false)
    static let pulse = Sensor(
        object: "pulse", name: "Pulse", kind: "blood_pressure",
        valueTemplate: "{{ value_json.value.pulse_rate_bpm if value_json.value.pulse_rate_bpm is number else None }}",
        unit: "bpm", icon: "mdi:heart-pulse", needsLink: false)

    /// A pressure of the measurement in mmHg, whichever unit the cuff reports (1 kPa =
    /// 7.50062 mmHg); a special SFLOAT (`nan`, …) renders `None`, unknown.
    static func millimetresOfMercury(_ field: String) -> String {
        "{% set p = value_json.value.\(field) %}{{ ((p * 7.50062) | round(0) if value_json.value.pressure_unit == 'kpa' else p) "
            + "if p is number else None }}"
    }
    static let weight = Sensor(
        object: "weight", name: "Weight", kind: "weight",
        valueTemplate: "{{ (value_json.value.weight * 0.45359237) | round(2) if value_json.value.weight is number and "
            + "value_json.value.weight_unit == 'lb' else (value_json.value.weight if value_json.value.weight is number else None) }}",
        unit: "kg", deviceClass: "weight", needsLink: false)
    /// When a device that measures now and then last sent a measurement: the receive time of
    /// its last value of `kind`, read from that value's own message (every value record has its
    /// `time`), so no message ever lacks it — Home Assistant 2024.3 warns of a timestamp sensor's
    /// state that does not parse, `None` included. What a sleeping cuff or scale shows beside
    /// `asleep`.
    static func lastMeasurement(kind: String) -> Sensor {
        Sensor(
            object: "last_measurement", name: "Last measurement", kind: kind, valueTemplate: "{{ value_json.time }}",
            deviceClass: "timestamp", icon: "mdi:clock-check-outline", measurement: false, needsLink: false)
    }

    static let byKind: [String: [Sensor]] = [
        "heart_rate": [heartRate], "temperature": [temperature], "spo2": [spo2],
        "blood_pressure": [systolic, diastolic, pulse], "weight": [weight],
    ]

    /// A template of the device state that renders `expression`, or `None` (unknown) while the
    /// state topic holds no JSON: a removed device's state is emptied after its configs, but
    /// Home Assistant drops entities asynchronously, and an entity still subscribed would fail on
    /// `value_json` (an error in its log) without the guard.
    static func stateTemplate(_ expression: String) -> String {
        "{{ \(expression) if value_json is defined else None }}"
    }

    /// A button or switch that sends the device's commands.
    struct Control: Sendable {
        var component: String
        var object: String
        var name: String
        var icon: String
        /// The ops it sends: announced only when `allow_commands` has every one.
        var ops: Set<String>
        /// The button's payload, or the switch's `on` payload.
        var payload: String
        /// The switch's `off` payload and its state template (from the device state).
        var offPayload: String? = nil
        var stateTemplate: String? = nil
        var needsLink = false
    }

    static let reconnect = Control(
        component: "button", object: "reconnect", name: "Reconnect", icon: "mdi:bluetooth-connect", ops: ["reconnect"],
        payload: #"{"id":"ha-reconnect","op":"reconnect"}"#)
    static let hold = Control(
        component: "switch", object: "hold", name: "Hold disconnected", icon: "mdi:bluetooth-off", ops: ["disconnect", "reconnect"],
        payload: #"{"id":"ha-hold","op":"disconnect"}"#, offPayload: #"{"id":"ha-release","op":"reconnect"}"#,
        stateTemplate: stateTemplate("('ON' if value_json.held else 'OFF')"))
    static let readBattery = Control(
        component: "button", object: "read_battery", name: "Read battery", icon: "mdi:battery-sync", ops: ["read"],
        payload: #"{"id":"ha-read-battery","op":"read","characteristic":"2a19"}"#, needsLink: true)

    var gatewayIdentifier: String { "wearfleet_gateway_\(topics.gatewayID)" }
    static func node(_ device: DeviceID) -> String { "wearfleet_\(MQTTTopics.segment(device))" }

    /// The configs `record` should have now, by topic.
    func configs(for record: MQTTDeviceRecord) -> [(topic: String, payload: [UInt8])] {
        var sensors = [Self.connection]
        if record.battery != nil { sensors.append(Self.battery) }
        if record.rssi != nil { sensors.append(Self.rssi) }
        for kind in record.kinds.sorted() { sensors += Self.byKind[kind] ?? [] }
        if let kind = record.kinds.sorted().first(where: MQTTTopics.occasionalKinds.contains) {
            sensors.append(Self.lastMeasurement(kind: kind))
        }
        var controls = [Self.reconnect, Self.hold]
        if record.battery != nil { controls.append(Self.readBattery) }
        return sensors.map { (topic(record.id, $0), config($0, for: record)) }
            + controls.filter { $0.ops.isSubset(of: commands) }.map { (topic(record.id, $0), config($0, for: record)) }
    }

    /// The controls' topics `allow_commands` does not permit: cleared at a connection's start (and
    /// when a device becomes this gateway's), since an earlier run with more commands allowed may
    /// have announced them. A permitted control that waits for something to act on (`Read
    /// battery` before this run read the level) keeps what an earlier run announced: the device
    /// had it, and will again — emptying it would remove the button from Home Assistant at
    /// every restart.
    func withdrawnControls(of device: DeviceID) -> [String] {
        [Self.reconnect, Self.hold, Self.readBattery].filter { !$0.ops.isSubset(of: commands) }.map { topic(device, $0) }
    }

    /// Every config topic a device may have had: cleared (empty retained) when it is forgotten.
    func allTopics(of device: DeviceID) -> [String] {
        let sensors = [Self.connection, Self.battery, Self.rssi, Self.lastMeasurement(kind: "")]
            + Self.byKind.values.joined().sorted { $0.object < $1.object }
        return sensors.map { topic(device, $0) } + [Self.reconnect, Self.hold, Self.readBattery].map { topic(device, $0) }
    }

    /// Where a sensor of `kind` reads its values: for a kind measured now and then, the retained
    /// `…/<kind>/latest` (a value topic is not retained, and Home Assistant 2024.3's MQTT sensor
    /// restores no state without `expire_after`: after its restart a sleeping cuff's readings
    /// would be `unknown`).
    func stateTopic(_ device: DeviceID, kind: String) -> String {
        MQTTTopics.occasionalKinds.contains(kind) ? topics.latestValue(device, kind: kind) : topics.value(device, kind: kind, characteristic: "")
    }

    func topic(_ device: DeviceID, _ sensor: Sensor) -> String {
        topics.discovery(component: "sensor", node: Self.node(device), object: sensor.object)
    }

    func topic(_ device: DeviceID, _ control: Control) -> String {
        topics.discovery(component: control.component, node: Self.node(device), object: control.object)
    }

    func config(_ sensor: Sensor, for record: MQTTDeviceRecord) -> [UInt8] {
        var object = entity(object: sensor.object, name: sensor.name, icon: sensor.icon, for: record)
        object.string("state_topic", sensor.kind.map { stateTopic(record.id, kind: $0) } ?? topics.state(record.id))
        object.string("value_template", sensor.valueTemplate)
        if let unit = sensor.unit { object.string("unit_of_measurement", unit) }
        if let deviceClass = sensor.deviceClass { object.string("device_class", deviceClass) }
        if let options = sensor.options { object.strings("options", options) }
        if sensor.measurement { object.string("state_class", "measurement") }
        if sensor.diagnostic { object.string("entity_category", "diagnostic") }
        if !sensor.enabledByDefault { object.bool("enabled_by_default", false) }
        if let expireAfter = sensor.expireAfter { object.integer("expire_after", expireAfter) }
        object.string("availability_mode", "all")
        object.objects("availability", availability(record.id, needsLink: sensor.needsLink, needsNoLink: sensor.needsNoLink))
        object.object("device", device(record))
        object.object("origin", origin)
        return object.finish()
    }

    func config(_ control: Control, for record: MQTTDeviceRecord) -> [UInt8] {
        var object = entity(object: control.object, name: control.name, icon: control.icon, for: record)
        object.string("command_topic", topics.command(record.id))
        if let off = control.offPayload, let template = control.stateTemplate {
            object.string("payload_on", control.payload)
            object.string("payload_off", off)
            object.string("state_topic", topics.state(record.id))
            object.string("value_template", template)
            object.string("state_on", "ON")
            object.string("state_off", "OFF")
        } else {
            object.string("payload_press", control.payload)
        }
        object.integer("qos", 1)
        object.string("availability_mode", "all")
        object.objects("availability", availability(record.id, needsLink: control.needsLink))
        object.object("device", device(record))
        object.object("origin", origin)
        return object.finish()
    }

    /// The keys every entity starts with: its name, ids and icon.
    private func entity(object: String, name: String, icon: String?, for record: MQTTDeviceRecord) -> JSONObjectWriter {
        let node = Self.node(record.id)
        var entity = JSONObjectWriter(capacity: 1024)
        entity.string("name", name)
        entity.string("unique_id", "\(node)_\(object)")
        entity.string("object_id", "\(node)_\(object)")
        if let icon { entity.string("icon", icon) }
        return entity
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
        if !version.isEmpty { device.string("sw_version", version) }
        object.object("device", device)
        object.object("origin", origin)
        let topic = topics.discovery(component: "binary_sensor", node: gatewayIdentifier, object: "status")
        return (topic, object.finish())
    }

    private var origin: JSONObjectWriter {
        var origin = JSONObjectWriter(capacity: 48)
        origin.string("name", "wearfleetd")
        if !version.isEmpty { origin.string("sw_version", version) }
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

    /// `[gateway status, device state]`: the gateway must be online and, for measurements and
    /// reads, the device linked (or, for the advertised RSSI, not linked).
    private func availability(_ device: DeviceID, needsLink: Bool, needsNoLink: Bool = false) -> [JSONObjectWriter] {
        var gateway = JSONObjectWriter(capacity: 96)
        gateway.string("topic", topics.gatewayStatus)
        gateway.string("payload_available", "online")
        gateway.string("payload_not_available", "offline")
        guard needsLink || needsNoLink else { return [gateway] }
        let linked = MQTTDeviceRecord.linkedStates.sorted().map { "'\($0)'" }.joined(separator: ", ")
        var state = JSONObjectWriter(capacity: 192)
        state.string("topic", topics.state(device))
        state.string(
            "value_template",
            "{{ 'online' if value_json is defined and value_json.state \(needsLink ? "in" : "not in") [\(linked)] else 'offline' }}")
        state.string("payload_available", "online")
        state.string("payload_not_available", "offline")
        return [gateway, state]
    }
}
