import FleetCore
import FoundationEssentials
import GATT

/// A device's state change as a watch client reads it, beside the value records (README,
/// "Value JSON"): `{"kind":"state","device":…,"address_type":…,"adapter"?,"name"?,"session":…,
/// "state":"backingOff","previous":"ready","reason"?:…,"time":…}`. `reason` says why a
/// `degraded` or `suspended` device is so (`writesFailing`, `circuitOpen`, …) or, for any
/// other state reached by a failure, the failure's class (`transient`, `outOfSlots`, …).
public struct LiveStateRecord: Sendable {
    public let device: DeviceID
    public let state: DeviceState
    public let previous: DeviceState
    /// The journal's `SESSION_ID` of the session the change belongs to (`<run>-<session>`).
    public let session: String
    public let cause: FailureClass?
    public let name: String?
    public let adapter: AdapterID?
    public let time: Date

    public init(
        device: DeviceID, state: DeviceState, previous: DeviceState, session: String, cause: FailureClass?, name: String?,
        adapter: AdapterID?, time: Date = Date()
    ) {
        self.device = device
        self.state = state
        self.previous = previous
        self.session = session
        self.cause = cause
        self.name = name
        self.adapter = adapter
        self.time = time
    }

    /// Why the device is in `state`: the state's own reason, else the failure's class.
    public var reason: String? { Self.reason(state, cause: cause) }

    /// The one vocabulary of reasons every outlet uses (the control interface's `Reason`, watch
    /// records, `DeviceStateChanged`, the MQTT device state): `writesFailing`, `circuitOpen`,
    /// `budgetExhausted(transient)`, …, else the failure class (`transient`, `outOfSlots`, …).
    public static func reason(_ state: DeviceState, cause: FailureClass?) -> String? {
        StateDetail(state, now: nil).reason ?? cause?.rawValue
    }

    public func jsonBytes() -> [UInt8] {
        var object = JSONObjectWriter(capacity: 256)
        object.string("kind", "state")
        object.string("device", device.address.description)
        object.string("address_type", device.addressType.rawValue)
        if let adapter { object.string("adapter", adapter.name) }
        if let name { object.string("name", name) }
        object.string("session", session)
        object.string("state", state.name)
        object.string("previous", previous.name)
        if let reason { object.string("reason", reason) }
        object.string("time", LiveValueRecord.timestamp(time))
        return object.finish()
    }

    /// The record telling a watch client that records were lost because it read too slowly:
    /// `{"kind":"dropped","dropped":N,"time":…}`, N the total lost since it started watching.
    static func droppedJSON(total: Int, time: Date = Date()) -> [UInt8] {
        var object = JSONObjectWriter(capacity: 80)
        object.string("kind", "dropped")
        object.integer("dropped", total)
        object.string("time", LiveValueRecord.timestamp(time))
        return object.finish()
    }
}
