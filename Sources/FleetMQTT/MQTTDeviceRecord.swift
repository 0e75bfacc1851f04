import Fleet
import FleetCore
import FoundationEssentials
import GATT

/// What the bridge knows of one device, published retained on `<prefix>/device/<ADDR>/state`:
/// the fleet's events fill it in (state, reason, adapter, session, name, class, pinned), values
/// add the battery level, the last value time and what Device Information said, and the status
/// refresh adds RSSI.
struct MQTTDeviceRecord: Sendable, Equatable {
    var id: DeviceID
    var name: String?
    var className: String?
    var pinned = false
    /// Held disconnected by a `disconnect` command until `reconnect`.
    var held = false
    var state: String?
    /// Why the device is in its state, when the state has one (`degraded(…)`, `suspended(…)`,
    /// or the failure class that ended a link).
    var reason: String?
    var adapter: AdapterID?
    var rssi: Int?
    /// The journal's `SESSION_ID` of the latest session (`<run>-<session>`).
    var session: String?
    var lastValueAt: Date?
    var battery: Int?
    var model: String?
    var manufacturer: String?
    /// Value kinds seen, so a sensor is announced to Home Assistant once the device has one.
    var kinds: Set<String> = []

    init(id: DeviceID) {
        self.id = id
    }

    /// Takes what values taught `earlier` (another connection's record of the device); what the
    /// fleet says of the device (state, name, adapter, …) comes from its status instead.
    mutating func keepLearned(from earlier: MQTTDeviceRecord) {
        battery = earlier.battery
        model = earlier.model
        manufacturer = earlier.manufacturer
        kinds = earlier.kinds
        lastValueAt = earlier.lastValueAt
    }

    /// `{"device":…,"state":…,"reason":…,"adapter":…,"rssi":…,"pinned":…,"held":…,"class":…,
    /// "name":…,"gateway":…,"session":…,"last_value_time":…,"battery":…}`, keys in this order.
    /// What Home Assistant's templates read (`state`, `rssi`, `held`, `battery`) is always there,
    /// `null` while unknown; any other key whose value is not known is left out (as in the value
    /// JSON). `rssi` is the advertised RSSI, so `null` while the device is linked: BlueZ measures
    /// RSSI from advertisements only, and a linked device does not advertise (what the fleet last
    /// heard before the link would be shown as current).
    func stateJSON(gateway: String) -> [UInt8] {
        var object = JSONObjectWriter(capacity: 256)
        object.string("device", id.address.description)
        if let state { object.string("state", state) } else { object.null("state") }
        optional(&object, "reason", reason)
        optional(&object, "adapter", adapter?.name)
        if let rssi, !isLinked { object.integer("rssi", rssi) } else { object.null("rssi") }
        object.bool("pinned", pinned)
        object.bool("held", held)
        optional(&object, "class", className)
        optional(&object, "name", name)
        object.string("gateway", gateway)
        if let session { object.string("session", session) }
        optional(&object, "last_value_time", lastValueAt.map(LiveValueRecord.utcSeconds))
        if let battery { object.integer("battery", battery) } else { object.null("battery") }
        return object.finish()
    }

    /// Whether the state is one of a linked device (`DeviceState.isLinked`).
    var isLinked: Bool { state.map(Self.linkedStates.contains) ?? false }
    static let linkedStates: Set<String> = ["discovering", "pairing", "ready", "degraded"]

    private func optional(_ object: inout JSONObjectWriter, _ key: String, _ value: String?) {
        if let value { object.string(key, value) }
    }
}
