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
/// Not thread-safe: the writer thread owns it.
final class LiveValueEncoder {
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

    /// The record of one value as `LiveValueRecord.jsonBytes()` writes it.
    func encode(
        device: DeviceID, characteristic: String, receivedAt: Date, result: Result<CharacteristicEvent, GATTDecodeError>,
        bytes: [UInt8], info: WatchHub.DeviceInfo?
    ) -> [UInt8] {
        var record: [UInt8] = []
        record.reserveCapacity(96 + 2 * bytes.count + 128)
        record.append(contentsOf: #"{"kind":""#.utf8)
        switch result {
        case .success(let event): record.append(contentsOf: event.kind.utf8)
        case .failure: record.append(contentsOf: "invalid".utf8)
        }
        record.append(UInt8(ascii: "\""))
        record.append(contentsOf: head(device: device, characteristic: characteristic, info: info))
        appendTime(receivedAt, to: &record)
        // The rest as `LiveValueRecord.jsonBytes()` writes it after the time, by the same writer.
        var rest = JSONObjectWriter(capacity: 96)
        switch result {
        case .success(let event):
            rest.object("value", event.jsonValue)
            // A raw value's summary would only repeat `hex`.
            if case .raw = event {} else { rest.string("summary", event.summary) }
        case .failure(let error):
            var details = JSONObjectWriter(capacity: 96)
            details.string("field", error.field)
            details.integer("offset", error.offset)
            details.string("message", error.description)
            rest.object("error", details)
        }
        let tail = rest.finish()
        // `{…}` becomes `,…`: the time's closing quote, then the fields.
        record.append(UInt8(ascii: "\""))
        record.append(UInt8(ascii: ","))
        record.append(contentsOf: tail[1..<(tail.count - 1)])
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
