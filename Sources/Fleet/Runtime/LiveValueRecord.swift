import FleetCore
import FoundationEssentials
import GATT

/// One decoded (or undecodable) value as it leaves the daemon: the record a watch client reads
/// from its socket and MQTT publishes, in one documented JSON shape (README, "Value JSON").
///
/// `jsonBytes()` is one compact JSON object, keys always in this order (`?`: only when known):
/// `kind`, `device`, `address_type`, `adapter`?, `name`?, `session`?, `characteristic`, `time`,
/// then `value` and `summary` (not for `raw`) for a value that decoded, or `error` for one that did not, then
/// `hex` (the bytes as the device sent them). `kind` is the characteristic's kind
/// (`CharacteristicEvent.kind`: `heart_rate`, `battery`, …, `raw` for a characteristic without
/// a decoder) or `invalid` for bytes its decoder refused; it is usable as an MQTT topic segment.
/// `time` is the wall-clock time the daemon received the value, UTC, microseconds
/// (`2026-11-24T19:36:14.123456Z`).
public struct LiveValueRecord: Sendable {
    public let device: DeviceID
    /// Lower-case 128-bit UUID as BlueZ reports it.
    public let characteristic: String
    /// When the daemon received the value (wall clock).
    public let receivedAt: Date
    public let result: Result<CharacteristicEvent, GATTDecodeError>
    /// The bytes as the device sent them.
    public let bytes: [UInt8]
    /// The device's connection session the value arrived in, when known.
    public let session: String?
    /// The device's configured name or BlueZ's alias, when known.
    public let name: String?
    /// The adapter of the device's link, when known.
    public let adapter: AdapterID?

    /// `value` with what the fleet knows of its device.
    public init(_ value: ValuePipeline.Value, session: String?, name: String? = nil, adapter: AdapterID? = nil) {
        self.init(
            device: value.device, characteristic: value.characteristic, receivedAt: value.receivedAt, result: value.result,
            bytes: value.bytes, session: session, name: name, adapter: adapter)
    }

    public init(
        device: DeviceID, characteristic: String, receivedAt: Date, result: Result<CharacteristicEvent, GATTDecodeError>,
        bytes: [UInt8], session: String?, name: String? = nil, adapter: AdapterID? = nil
    ) {
        self.device = device
        self.characteristic = characteristic
        self.receivedAt = receivedAt
        self.result = result
        self.bytes = bytes
        self.session = session
        self.name = name
        self.adapter = adapter
    }

    /// `heart_rate`, `battery`, `temperature`, `spo2`, …, `raw` (no decoder for the
    /// characteristic), or `invalid` (its decoder refused the bytes).
    public var kind: String { Self.kind(of: result) }

    /// The kind of a value with this decoding result (`kind` above): every outlet names a value
    /// by it (the record, its MQTT topic, the sensors announced to Home Assistant).
    public static func kind(of result: Result<CharacteristicEvent, GATTDecodeError>) -> String {
        switch result {
        case .success(let event): event.kind
        case .failure: "invalid"
        }
    }

    /// The record as one compact JSON object (no trailing newline).
    public func jsonBytes() -> [UInt8] {
        var object = JSONObjectWriter(capacity: 320)
        object.string("kind", kind)
        object.string("device", device.address.description)
        object.string("address_type", device.addressType.rawValue)
        if let adapter { object.string("adapter", adapter.name) }
        if let name { object.string("name", name) }
        if let session { object.string("session", session) }
        object.string("characteristic", characteristic)
        object.string("time", Self.timestamp(receivedAt))
        switch result {
        case .success(let event):
            object.object("value", event.jsonValue)
            // A raw value's summary would only repeat `hex`.
            if case .raw = event {} else { object.string("summary", event.summary) }
        case .failure(let error):
            var details = JSONObjectWriter(capacity: 96)
            details.string("field", error.field)
            details.integer("offset", error.offset)
            details.string("message", error.description)
            object.object("error", details)
        }
        object.hex("hex", bytes)
        return object.finish()
    }

    // MARK: - Time

    /// `date` as RFC 3339 UTC with microseconds: `2026-11-24T19:36:14.123456Z`.
    static func timestamp(_ date: Date) -> String {
        let micros = Int64((date.timeIntervalSince1970 * 1_000_000).rounded(.down))
        let (seconds, fraction) = micros.quotientAndRemainder(dividingBy: 1_000_000)
        let (days, secondOfDay) = fraction < 0
            ? floorDivision(seconds - 1, 86_400) : floorDivision(seconds, 86_400)
        let microsecond = fraction < 0 ? fraction + 1_000_000 : fraction
        let (year, month, day) = civilDate(daysSinceEpoch: days)
        return "\(padded(year, 4))-\(padded(month, 2))-\(padded(day, 2))T\(padded(secondOfDay / 3600, 2)):"
            + "\(padded(secondOfDay / 60 % 60, 2)):\(padded(secondOfDay % 60, 2)).\(padded(microsecond, 6))Z"
    }

    /// `date` as RFC 3339 UTC in whole seconds: `2026-11-24T19:36:14Z` (the MQTT device state's
    /// `last_value_time`).
    public static func utcSeconds(_ date: Date) -> String {
        let (days, secondOfDay) = floorDivision(Int64(date.timeIntervalSince1970.rounded(.down)), 86_400)
        let (year, month, day) = civilDate(daysSinceEpoch: days)
        return "\(padded(year, 4))-\(padded(month, 2))-\(padded(day, 2))T\(padded(secondOfDay / 3600, 2)):"
            + "\(padded(secondOfDay / 60 % 60, 2)):\(padded(secondOfDay % 60, 2))Z"
    }

    private static func floorDivision(_ value: Int64, _ divisor: Int64) -> (Int64, Int64) {
        let (quotient, remainder) = value.quotientAndRemainder(dividingBy: divisor)
        return remainder < 0 ? (quotient - 1, remainder + divisor) : (quotient, remainder)
    }

    /// The proleptic Gregorian date `days` after 1970-01-01 (Howard Hinnant's `civil_from_days`).
    private static func civilDate(daysSinceEpoch days: Int64) -> (Int64, Int64, Int64) {
        let shifted = days + 719_468
        let era = (shifted >= 0 ? shifted : shifted - 146_096) / 146_097
        let dayOfEra = shifted - era * 146_097
        let yearOfEra = (dayOfEra - dayOfEra / 1460 + dayOfEra / 36524 - dayOfEra / 146_096) / 365
        let dayOfYear = dayOfEra - (365 * yearOfEra + yearOfEra / 4 - yearOfEra / 100)
        let monthIndex = (5 * dayOfYear + 2) / 153
        let day = dayOfYear - (153 * monthIndex + 2) / 5 + 1
        let month = monthIndex < 10 ? monthIndex + 3 : monthIndex - 9
        return (yearOfEra + era * 400 + (month <= 2 ? 1 : 0), month, day)
    }

    private static func padded(_ value: Int64, _ width: Int) -> String {
        let text = String(value)
        return text.count >= width ? text : String(repeating: "0", count: width - text.count) + text
    }
}
