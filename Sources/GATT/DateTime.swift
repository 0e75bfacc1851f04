// Date Time (0x2A08) is also the timestamp field of the health characteristics; it is validated
// field by field so a garbled timestamp is reported, not turned into a plausible wrong date.

/// The Date Time characteristic (0x2A08): a calendar date and wall-clock time, no time zone.
///
/// Zero in `year`, `month` or `day` means "not known" per the specification. Decoding rejects
/// values outside year 1582...9999 (or 0), month 0...12, day 0...31, hours 0...23,
/// minutes 0...59 and seconds 0...59 with `.outOfRange`.
public struct DateTime: Hashable, Sendable, CustomStringConvertible {
    public var year: UInt16
    public var month: UInt8
    public var day: UInt8
    public var hours: UInt8
    public var minutes: UInt8
    public var seconds: UInt8

    /// Encoded size in bytes.
    public static let byteCount = 7

    public init(year: UInt16, month: UInt8, day: UInt8, hours: UInt8, minutes: UInt8, seconds: UInt8) {
        self.year = year
        self.month = month
        self.day = day
        self.hours = hours
        self.minutes = minutes
        self.seconds = seconds
    }

    /// Decodes exactly the 7-byte field; trailing bytes are ignored (later revisions may add fields).
    public static func decode(_ bytes: some Collection<UInt8>) throws(GATTDecodeError) -> DateTime {
        var reader = ByteReader(bytes)
        return try read(from: &reader)
    }

    /// Reads the 7-byte field at the reader's cursor (shared by every characteristic with a timestamp).
    public static func read(from reader: inout ByteReader<some Collection<UInt8>>) throws(GATTDecodeError) -> DateTime {
        let year = try reader.readUInt16("year")
        try check(year == 0 || (1582...9999).contains(year), "year", UInt64(year), reader.offset - 2)
        let month = try readField(&reader, "month", 0...12)
        let day = try readField(&reader, "day", 0...31)
        let hours = try readField(&reader, "hours", 0...23)
        let minutes = try readField(&reader, "minutes", 0...59)
        let seconds = try readField(&reader, "seconds", 0...59)
        return DateTime(year: year, month: month, day: day, hours: hours, minutes: minutes, seconds: seconds)
    }

    private static func readField(
        _ reader: inout ByteReader<some Collection<UInt8>>, _ field: StaticString, _ range: ClosedRange<UInt8>
    ) throws(GATTDecodeError) -> UInt8 {
        let value = try reader.readUInt8(field)
        try check(range.contains(value), field, UInt64(value), reader.offset - 1)
        return value
    }

    private static func check(_ valid: Bool, _ field: StaticString, _ value: UInt64, _ offset: Int) throws(GATTDecodeError) {
        guard valid else {
            throw GATTDecodeError(field: String(describing: field), offset: offset, reason: .outOfRange(value: value))
        }
    }

    public func encode() -> [UInt8] {
        var writer = ByteWriter(capacity: Self.byteCount)
        write(to: &writer)
        return writer.bytes
    }

    public func write(to writer: inout ByteWriter) {
        writer.writeUInt16(year)
        writer.writeUInt8(month)
        writer.writeUInt8(day)
        writer.writeUInt8(hours)
        writer.writeUInt8(minutes)
        writer.writeUInt8(seconds)
    }

    /// `YYYY-MM-DDTHH:MM:SS`; unknown parts stay zero (`0000-00-00T…`).
    public var description: String {
        DecimalText.padded(year, width: 4) + "-" + DecimalText.padded(month, width: 2) + "-"
            + DecimalText.padded(day, width: 2) + "T" + DecimalText.padded(hours, width: 2) + ":"
            + DecimalText.padded(minutes, width: 2) + ":" + DecimalText.padded(seconds, width: 2)
    }
}

extension DateTime: KeyValueRenderable {
    public var keyValuePairs: [(key: String, value: String)] { [("date_time", description)] }
    public var summary: String { description }
}
