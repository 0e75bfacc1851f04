import FleetCore
import FoundationEssentials
import GATT

/// The watch writer's encoder of value records: the same bytes as `LiveValueRecord.jsonBytes()`
/// (the tests compare them for every kind of value), written with less work per value.
///
/// A watched fleet sends the same device and characteristic thousands of times a second, so the
/// part of a record that only depends on them and on what the fleet knows of the device
/// (`"device":…` to `"characteristic":…`) is written once per characteristic — kept by the
/// identity of the value's `ValuePipeline.Source`, one pointer hashed per value — and kept until
/// that knowledge changes; the time's text up to the second is kept per second and its
/// microseconds written straight into the record; and the record is written into one buffer
/// rather than assembled from intermediate strings. Not thread-safe: its one user owns it (the watch writer's thread; MQTT's
/// client thread).
public final class LiveValueEncoder {
    private struct Head {
        /// Held, so that no other source can take its identity (the key) while the head is kept.
        let source: ValuePipeline.Source
        var info: WatchHub.DeviceInfo?
        /// The version of the hub's device knowledge `info` was last found current in (nil:
        /// compared with the caller's info every time).
        var infoVersion: UInt64?
        /// `,"device":…,"characteristic":"…","time":"`
        let bytes: [UInt8]
    }

    /// Where each source's head is in `heads` (an index, so a value reads the kept bytes in
    /// place rather than copying the head out of a dictionary with its references).
    private var headIndex: [ObjectIdentifier: Int] = [:]
    private var heads: [Head] = []
    /// The second (since 1970) `secondPrefix` spells, and `YYYY-MM-DDTHH:MM:SS.`.
    private var second = Int64.min
    private var secondPrefix: [UInt8] = []
    /// The day (since 1970-01-01) whose `YYYY-MM-DDT` is kept.
    private var dayPrefix: (day: Int64, text: [UInt8]) = (.min, [])

    /// Heads kept at most (beyond it they are forgotten and rebuilt).
    static let headLimit = 16384

    /// `"value":{"name":"raw"}` as the event's own `jsonValue` spells it, kept after the first raw
    /// value: a raw value's object holds only its name (its bytes are the record's `hex`).
    private var rawValueMember: [UInt8]?

    public init() {}

    /// `value`'s record, with what the fleet knows of its device, as
    /// `LiveValueRecord(value, …).jsonBytes()` writes it.
    public func encode(_ value: ValuePipeline.Value, info: WatchHub.DeviceInfo?) -> [UInt8] {
        let head = headPosition(value.source, version: nil) { _ in info }
        var record: [UInt8] = []
        record.reserveCapacity(Self.capacity(head: heads[head].bytes.count, bytes: value.bytes.count))
        appendRecord(head: heads[head].bytes, receivedAt: value.receivedAt, result: value.result, bytes: value.bytes, to: &record)
        return record
    }

    /// Appends `value`'s record to `output`, with `devices`' knowledge of its device (looked up
    /// only when `version` differs from the one its kept head was last found current in).
    func append(_ value: ValuePipeline.Value, devices: [DeviceID: WatchHub.DeviceInfo], version: UInt64, to output: inout [UInt8]) {
        let head = headPosition(value.source, version: version) { devices[$0] }
        appendRecord(head: heads[head].bytes, receivedAt: value.receivedAt, result: value.result, bytes: value.bytes, to: &output)
    }

    /// The record of one value as `LiveValueRecord.jsonBytes()` writes it, its head written afresh:
    /// for any device, characteristic and time (the tests' way in; the outlets encode `Value`s).
    func encode(
        device: DeviceID, characteristic: String, receivedAt: Date, result: Result<CharacteristicEvent, GATTDecodeError>,
        bytes: [UInt8], info: WatchHub.DeviceInfo?
    ) -> [UInt8] {
        let head = Self.head(device: device, characteristic: characteristic, info: info)
        var record: [UInt8] = []
        record.reserveCapacity(Self.capacity(head: head.count, bytes: bytes.count))
        appendRecord(head: head, receivedAt: receivedAt, result: result, bytes: bytes, to: &record)
        return record
    }

    /// A record's size, nearly always: the head, the time, the hex twice at most (a raw value's is
    /// in `hex` only) and room for a decoded value's fields and summary.
    static func capacity(head: Int, bytes: Int) -> Int { head + 2 * bytes + 224 }

    private func appendRecord(
        head: [UInt8], receivedAt: Date, result: Result<CharacteristicEvent, GATTDecodeError>, bytes: [UInt8], to record: inout [UInt8]
    ) {
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
        Self.appendHex(bytes, to: &record)
        record.append(UInt8(ascii: "\""))
        record.append(UInt8(ascii: "}"))
    }

    private func rawValueMember(_ event: CharacteristicEvent) -> [UInt8] {
        if let rawValueMember { return rawValueMember }
        var member = Array(#""value":"#.utf8)
        event.jsonValue.appendObject(to: &member)
        rawValueMember = member
        return member
    }

    /// The position in `heads` of `source`'s current head. `info` gives what the fleet knows of
    /// the device; with a `version`, it is asked only when the kept head was last found current
    /// in another version.
    private func headPosition(_ source: ValuePipeline.Source, version: UInt64?, info: (DeviceID) -> WatchHub.DeviceInfo?) -> Int {
        let key = ObjectIdentifier(source)
        if let position = headIndex[key] {
            if let version, heads[position].infoVersion == version { return position }
            let current = info(source.device)
            if heads[position].info == current {
                heads[position].infoVersion = version
                return position
            }
            // What the fleet knows of the device changed: written afresh in place.
            heads[position] = Head(
                source: source, info: current, infoVersion: version,
                bytes: Self.head(device: source.device, characteristic: source.characteristic, info: current))
            return position
        }
        if heads.count >= Self.headLimit {
            heads.removeAll()
            headIndex.removeAll()
        }
        let current = info(source.device)
        heads.append(Head(
            source: source, info: current, infoVersion: version,
            bytes: Self.head(device: source.device, characteristic: source.characteristic, info: current)))
        headIndex[key] = heads.count - 1
        return heads.count - 1
    }

    /// `,"device":…,"characteristic":"…","time":"`, written by the same writer as
    /// `LiveValueRecord.jsonBytes()` writes them, in its order.
    private static func head(device: DeviceID, characteristic: String, info: WatchHub.DeviceInfo?) -> [UInt8] {
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
        return bytes
    }

    /// `LiveValueRecord.timestamp(date)`'s text without its quotes: the text up to the
    /// second's `.` kept per second (the date part per day), the microseconds written in place.
    private func appendTime(_ date: Date, to record: inout [UInt8]) {
        let micros = Int64((date.timeIntervalSince1970 * 1_000_000).rounded(.down))
        var (second, microsecond) = micros.quotientAndRemainder(dividingBy: 1_000_000)
        if microsecond < 0 {
            second -= 1
            microsecond += 1_000_000
        }
        if second != self.second {
            secondPrefix = Self.secondPrefix(second, date: date, dayPrefix: &dayPrefix)
            self.second = second
        }
        record.append(contentsOf: secondPrefix)
        // Six digits and the `Z`, written into a small buffer and appended at once (an append
        // per byte checks the array's capacity and uniqueness each time).
        withUnsafeTemporaryAllocation(of: UInt8.self, capacity: 7) { digits in
            var rest = microsecond
            for index in (0..<6).reversed() {
                digits[index] = UInt8(ascii: "0") + UInt8(truncatingIfNeeded: rest % 10)
                rest /= 10
            }
            digits[6] = UInt8(ascii: "Z")
            record.append(contentsOf: UnsafeBufferPointer(digits))
        }
    }

    /// `YYYY-MM-DDTHH:MM:SS.` for `second` (since 1970), `dayPrefix` (the day it spells, and
    /// `YYYY-MM-DDT`) renewed when the day changes.
    private static func secondPrefix(_ second: Int64, date: Date, dayPrefix: inout (day: Int64, text: [UInt8])) -> [UInt8] {
        let secondsPerDay: Int64 = 86_400
        var (day, secondOfDay) = second.quotientAndRemainder(dividingBy: secondsPerDay)
        if secondOfDay < 0 {
            day -= 1
            secondOfDay += secondsPerDay
        }
        if day != dayPrefix.day {
            // `YYYY-MM-DDT` as the record's own formatter spells it (years beyond four digits too).
            let text = LiveValueRecord.timestamp(date)
            dayPrefix = (day, Array(text.utf8.prefix(while: { $0 != UInt8(ascii: "T") })) + [UInt8(ascii: "T")])
        }
        var prefix = dayPrefix.text
        for (value, separator) in [(secondOfDay / 3600, ":"), (secondOfDay / 60 % 60, ":"), (secondOfDay % 60, ".")] {
            prefix.append(UInt8(ascii: "0") + UInt8(truncatingIfNeeded: value / 10))
            prefix.append(UInt8(ascii: "0") + UInt8(truncatingIfNeeded: value % 10))
            prefix.append(contentsOf: separator.utf8)
        }
        return prefix
    }

    /// `bytes` in lower-case hex, written a chunk at a time into a small buffer and appended.
    private static func appendHex(_ bytes: [UInt8], to record: inout [UInt8]) {
        let chunk = 64
        bytes.withUnsafeBufferPointer { source in
            withUnsafeTemporaryAllocation(of: UInt8.self, capacity: 2 * chunk) { digits in
                var start = 0
                while start < source.count {
                    let count = min(chunk, source.count - start)
                    for offset in 0..<count {
                        let byte = source[start + offset]
                        digits[2 * offset] = hexDigit(byte >> 4)
                        digits[2 * offset + 1] = hexDigit(byte & 0x0F)
                    }
                    record.append(contentsOf: UnsafeBufferPointer(rebasing: digits[..<(2 * count)]))
                    start += count
                }
            }
        }
    }

    private static func hexDigit(_ nibble: UInt8) -> UInt8 {
        nibble < 10 ? UInt8(ascii: "0") + nibble : UInt8(ascii: "a") - 10 + nibble
    }
}
