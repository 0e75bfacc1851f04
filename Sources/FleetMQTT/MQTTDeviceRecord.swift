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

    var isLinked: Bool { state == "ready" || state == "degraded" || state == "discovering" }

    /// `{"device":…,"state":…,"reason":…,"adapter":…,"rssi":…,"pinned":…,"class":…,"name":…,
    /// "gateway":…,"session":…,"last_value_time":…,"battery":…}`, keys in this order; a key whose
    /// value is not known is left out (as in the value JSON).
    func stateJSON(gateway: String) -> [UInt8] {
        var object = JSONObjectWriter(capacity: 256)
        object.string("device", id.address.description)
        optional(&object, "state", state)
        optional(&object, "reason", reason)
        optional(&object, "adapter", adapter?.name)
        if let rssi { object.integer("rssi", rssi) }
        object.bool("pinned", pinned)
        optional(&object, "class", className)
        optional(&object, "name", name)
        object.string("gateway", gateway)
        if let session { object.string("session", session) }
        optional(&object, "last_value_time", lastValueAt.map(Self.utcSeconds))
        if let battery { object.integer("battery", battery) }
        return object.finish()
    }

    private func optional(_ object: inout JSONObjectWriter, _ key: String, _ value: String?) {
        if let value { object.string(key, value) }
    }

    /// `2026-11-24T19:36:14Z`: RFC 3339, UTC, whole seconds.
    static func utcSeconds(_ date: Date) -> String {
        let seconds = Int64(date.timeIntervalSince1970.rounded(.down))
        let days = seconds >= 0 ? seconds / 86_400 : (seconds - 86_399) / 86_400
        let secondOfDay = seconds - days * 86_400
        // Civil date from days since 1970-01-01 (H. Hinnant's algorithm).
        let z = days + 719_468
        let era = (z >= 0 ? z : z - 146_096) / 146_097
        let dayOfEra = z - era * 146_097
        let yearOfEra = (dayOfEra - dayOfEra / 1460 + dayOfEra / 36_524 - dayOfEra / 146_096) / 365
        let dayOfYear = dayOfEra - (365 * yearOfEra + yearOfEra / 4 - yearOfEra / 100)
        let mp = (5 * dayOfYear + 2) / 153
        let day = dayOfYear - (153 * mp + 2) / 5 + 1
        let month = mp < 10 ? mp + 3 : mp - 9
        let year = yearOfEra + era * 400 + (month <= 2 ? 1 : 0)
        func two(_ n: Int64) -> String { n < 10 ? "0\(n)" : "\(n)" }
        return "\(year)-\(two(month))-\(two(day))T\(two(secondOfDay / 3600)):\(two(secondOfDay / 60 % 60)):\(two(secondOfDay % 60))Z"
    }
}
