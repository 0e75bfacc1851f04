import FleetCore
import FoundationEssentials
import GATT

/// The watch writer's encoder of value records: the same bytes as `LiveValueRecord.jsonBytes()`
/// (the tests compare them for every kind of value), written with less work per value.
///
/// A watched fleet sends the same device and characteristic thousands of times a second, so the
/// part of a record that only depends on them and on what the fleet knows of the device
/// (`"device":…` to `"characteristic":…`) is written once and kept until that knowledge changes;
/// the time's date is kept per day and its clock digits written straight into the record; and
/// the record is written into one buffer rather than assembled from intermediate strings.
/// Not thread-safe: its one user owns it (the watch writer's thread; MQTT's client thread).
public final class LiveValueEncoder {
    private struct Head {
        let characteristic: String
        let info: WatchHub.DeviceInfo?
        /// `,"device":…,"characteristic":"…","time":"`
        let bytes: [UInt8]
    }

    /// A device's heads by characteristic (a device has a handful: a short list beats hashing
    /// the UUID's text for every value).
    private var heads: [DeviceID: [Head]] = [:]
    /// The day (since 1970-01-01) `datePrefix` spells.
    private var day = Int64.min
    /// `YYYY-MM-DDT`
    private var datePrefix: [UInt8] = []

    /// Heads kept at most, over all devices (beyond it they are forgotten and rebuilt).
    static let headLimit = 16384
    private var headCount = 0

    /// `"value":{"name":"raw"}` as the event's own `jsonValue` spells it, kept after the first raw
    /// value: a raw value's object holds only its name (its bytes are the record's `hex`).
    private var rawValueMember: [UInt8]?

    public init() {}

    /// `value`'s record, with what the fleet knows of its device, as
    /// `LiveValueRecord(value, …).jsonBytes()` writes it.
    public func encode(_ value: ValuePipeline.Value, info: WatchHub.DeviceInfo?) -> [UInt8] {
        encode(
            device: value.device, characteristic: value.characteristic, receivedAt: value.receivedAt, result: value.result,
            bytes: value.bytes, info: info)
    }

    /// The record of one value as `LiveValueRecord.jsonBytes()` writes it.
    func encode(
        device: DeviceID, characteristic: String, receivedAt: Date, result: Result<CharacteristicEvent, GATTDecodeError>,
        bytes: [UInt8], info: WatchHub.DeviceInfo?
    ) -> [UInt8] {
        let head = head(device: device, characteristic: characteristic, info: info)
        var record: [UInt8] = []
        // The head, the time, the hex twice at most (a raw value's is in `hex` only) and room
        // for a decoded value's fields and summary: one allocation for nearly every record.
        record.reserveCapacity(head.count + 2 * bytes.count + 224)
        record.append(contentsOf: #"{"kind":""#.utf8)
        record.append(contentsOf: LiveValueRecord.kind(of: result).utf8)
        record.append(UInt8(ascii: "\""))
        record.append(contentsOf: head)
        appendTime(receivedAt, to: &record)
        // The time's closing quote, then the fields `LiveValueRecord.jsonBytes()` writes after it.
        record.append(UInt8(ascii: "\""))
        record.append(UInt8(ascii: ","))
        switch result {
        case .success(let event):
            if case .raw = event {
                // A raw value's summary would only repeat `hex`.
                record.append(contentsOf: rawValueMember(event))
            } else {
                record.append(contentsOf: #""value":"#.utf8)
                event.jsonValue.appendObject(to: &record)
                record.append(contentsOf: #","summary":"#.utf8)
                JSONObjectWriter.appendString(event.summary, to: &record)
            }
        case .failure(let error):
            var details = JSONObjectWriter(capacity: 96)
            details.string("field", error.field)
            details.integer("offset", error.offset)
            details.string("message", error.description)
            record.append(contentsOf: #""error":"#.utf8)
            details.appendObject(to: &record)
        }
        // The writer's `hex` reads the bytes through a generic sequence, one call per byte.
        record.append(contentsOf: #","hex":""#.utf8)
        for byte in bytes {
            record.append(Self.hexDigits[Int(byte >> 4)])
            record.append(Self.hexDigits[Int(byte & 0x0F)])
        }
        record.append(UInt8(ascii: "\""))
        record.append(UInt8(ascii: "}"))
        return record
    }

    private func rawValueMember(_ event: CharacteristicEvent) -> [UInt8] {
        if let rawValueMember { return rawValueMember }
        var member = Array(#""value":"#.utf8)
        event.jsonValue.appendObject(to: &member)
        rawValueMember = member
        return member
    }

    private static let hexDigits: [UInt8] = Array("0123456789abcdef".utf8)

    private func head(device: DeviceID, characteristic: String, info: WatchHub.DeviceInfo?) -> [UInt8] {
        if let known = heads[device]?.first(where: { $0.characteristic == characteristic }) {
            if known.info == info { return known.bytes }
            // What the fleet knows of the device changed: every characteristic's head is stale.
            headCount -= heads.removeValue(forKey: device)?.count ?? 0
        }
        if headCount >= Self.headLimit {
            heads.removeAll()
            headCount = 0
        }
        // Written by the same writer as `LiveValueRecord.jsonBytes()` writes them, in its order.
        var object = JSONObjectWriter(capacity: 192)
        object.string("device", device.address.description)
        object.string("address_type", device.addressType.rawValue)
        if let adapter = info?.adapter { object.string("adapter", adapter.name) }
        if let name = info?.name { object.string("name", name) }
        if let session = info?.session { object.string("session", session) }
        object.string("characteristic", characteristic)
        var bytes = object.finish()
        // `{…}` becomes `,…,"time":"`.
        bytes[0] = UInt8(ascii: ",")
        bytes.removeLast()
        bytes.append(contentsOf: #","time":""#.utf8)
        heads[device, default: []].append(Head(characteristic: characteristic, info: info, bytes: bytes))
        headCount += 1
        return bytes
    }

    /// `LiveValueRecord.timestamp(date)`'s text without its quotes: the date part kept per day,
    /// the clock's digits written in place.
    private func appendTime(_ date: Date, to record: inout [UInt8]) {
        let micros = Int64((date.timeIntervalSince1970 * 1_000_000).rounded(.down))
        let microsPerDay: Int64 = 86_400_000_000
        var (day, microOfDay) = micros.quotientAndRemainder(dividingBy: microsPerDay)
        if microOfDay < 0 {
            day -= 1
            microOfDay += microsPerDay
        }
        if day != self.day {
            // `YYYY-MM-DDT` as the record's own formatter spells it (years beyond four digits too).
            let text = LiveValueRecord.timestamp(date)
            datePrefix = Array(text.utf8.prefix(while: { $0 != UInt8(ascii: "T") })) + [UInt8(ascii: "T")]
            self.day = day
        }
        record.append(contentsOf: datePrefix)
        let (secondOfDay, microsecond) = microOfDay.quotientAndRemainder(dividingBy: 1_000_000)
        append(secondOfDay / 3600, width: 2, to: &record)
        record.append(UInt8(ascii: ":"))
        append(secondOfDay / 60 % 60, width: 2, to: &record)
        record.append(UInt8(ascii: ":"))
        append(secondOfDay % 60, width: 2, to: &record)
        record.append(UInt8(ascii: "."))
        append(microsecond, width: 6, to: &record)
        record.append(UInt8(ascii: "Z"))
    }

    /// `value` (0 ≤ value < 10^width) in `width` decimal digits, zero-padded.
    private func append(_ value: Int64, width: Int, to record: inout [UInt8]) {
        var divisor: Int64 = 1
        for _ in 1..<width { divisor *= 10 }
        var rest = value
        while divisor > 0 {
            record.append(UInt8(ascii: "0") + UInt8(truncatingIfNeeded: rest / divisor))
            rest %= divisor
            divisor /= 10
        }
    }
}
