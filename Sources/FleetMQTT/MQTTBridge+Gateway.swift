import Fleet
import FleetConfiguration
import FleetControl
import FleetCore
import GATT

// The gateway API on the broker, in Zigbee2MQTT's shape under `<prefix>/gateway/<gateway_id>/`:
// retained `info` and `devices`, and `event` for devices that come, go or change role. Each
// retained message is sent only when its bytes changed.

extension MQTTBridge {
    /// The fleet events after which `info` is built again (adapters, bluetoothd, a reload, the
    /// devices' counts): on the next flush, from one status however many came.
    static func changesInfo(_ event: FleetEvent) -> Bool {
        switch event {
        case .bluetoothdAppeared, .bluetoothdVanished, .adapterPowerChanged, .reloaded, .deviceAdded, .deviceRemoved, .deviceUpdated,
            .lifecycle(_, .stateChanged, _, _):
            true
        default: false
        }
    }

    /// `info`: `{"gateway","version","bluetoothd","adapters":[{"id","powered","slots","used",
    /// "discovering"}],"commands":[…],"devices":{"total","pinned","ready"},"configuration":{…}}`.
    /// The configuration summary names the pool, the classes and the MQTT topics, never a
    /// password, a key or the broker's credentials.
    func publishInfo(_ status: FleetStatus) {
        // A status older than the one last published (taken before it, answered after) is not.
        if let taken = status.capturedAt, let last = infoCapturedAt, taken < last { return }
        infoCapturedAt = status.capturedAt ?? infoCapturedAt
        infoChanged = false
        var object = JSONObjectWriter(capacity: 768)
        object.string("gateway", topics.gatewayID)
        object.string("version", WearfleetVersion.current)
        object.bool("bluetoothd", status.bluetoothdPresent)
        object.objects("adapters", status.adapters.map { adapter in
            var entry = JSONObjectWriter(capacity: 96)
            entry.string("id", adapter.id.name)
            entry.bool("powered", adapter.powered)
            entry.integer("slots", adapter.slots)
            entry.integer("used", adapter.linksAndAttempts)
            entry.bool("discovering", adapter.discovering)
            return entry
        })
        object.strings("commands", allowed.map(\.rawValue).sorted())
        var devices = JSONObjectWriter(capacity: 64)
        devices.integer("total", status.devices.count)
        devices.integer("pinned", status.pinnedTotal)
        devices.integer("ready", status.devices.filter { $0.state == .ready }.count)
        object.object("devices", devices)
        var configuration = JSONObjectWriter(capacity: 256)
        configuration.bool("pool", status.poolEnabled)
        configuration.strings("classes", status.classNames)
        configuration.string("topic_prefix", topics.prefix)
        configuration.bool("homeassistant_discovery", discovery != nil)
        configuration.string("discovery_prefix", topics.discoveryPrefix)
        if let settings {
            configuration.string("protocol", settings.protocolVersion == .v5 ? "5" : "3.1.1")
            configuration.bool("tls", settings.tls)
        }
        object.object("configuration", configuration)
        let payload = object.finish()
        guard payload != publishedInfo else { return }
        publishedInfo = payload
        client.publish(MQTTMessage(topic: topics.gatewayInfo, payload: payload, qos: 1, retain: true))
    }

    /// `devices`: every fleet device, by address: `[{"address","address_type","name","role"
    /// (pinned|pool),"class","state","held"[,"owner"]}, …]` (`owner`, the live owner or null,
    /// only when several gateways share the fleet). Sent when a device came, went or changed
    /// (`flush`, at most once a second while the fleet changes).
    func publishDevices() {
        devicesChanged = false
        var payload: [UInt8] = Array("[".utf8)
        for (index, record) in records.values.sorted(by: { $0.id < $1.id }).enumerated() {
            if index > 0 { payload.append(UInt8(ascii: ",")) }
            deviceSummary(record).appendObject(to: &payload)
        }
        payload.append(UInt8(ascii: "]"))
        guard payload != publishedDevices else { return }
        publishedDevices = payload
        client.publish(MQTTMessage(topic: topics.gatewayDevices, payload: payload, qos: 1, retain: true))
    }

    /// Publishes `devices` and `info` if the fleet changed since they were last sent: the 1 s
    /// tick's work, so a burst of changes costs one status and one message of each.
    func flush() async {
        if devicesChanged { publishDevices() }
        if infoChanged, let status { publishInfo(await status()) }
    }

    /// `event` (not retained): `{"type":"device_added","data":{"address",…}}`, with `reason` for
    /// a device that left the fleet (`device_removed`, `device_forgotten`).
    func publishEvent(_ type: String, _ record: MQTTDeviceRecord, reason: String? = nil) {
        devicesChanged = true
        var object = JSONObjectWriter(capacity: 256)
        object.string("type", type)
        if let reason { object.string("reason", reason) }
        object.object("data", deviceSummary(record))
        client.publish(MQTTMessage(topic: topics.gatewayEvent, payload: object.finish(), qos: 1, retain: false))
    }

    private func deviceSummary(_ record: MQTTDeviceRecord) -> JSONObjectWriter {
        var device = JSONObjectWriter(capacity: 192)
        device.string("address", record.id.address.description)
        device.string("address_type", record.id.addressType.rawValue)
        if let name = record.name { device.string("name", name) } else { device.null("name") }
        device.string("role", record.pinned ? "pinned" : "pool")
        device.string("class", record.className ?? FleetStateMachine.defaultClassName)
        if let state = record.state { device.string("state", state) } else { device.null("state") }
        device.bool("held", record.held)
        // With several gateways, the state is this gateway's view; the owner's is the device's own.
        if let owners {
            if let owner = owners[record.id] { device.string("owner", owner) } else { device.null("owner") }
        }
        return device
    }
}
