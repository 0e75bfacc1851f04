// Current Time (0x2A2B) is what a gateway reads to check a wearable's clock and writes to set it,
// so it must round-trip exactly, including the adjust-reason flags.

/// The Current Time characteristic (0x2A2B): Exact Time 256 plus the reason for the last change.
///
/// Layout: Date Time (7), Day of Week (1, 0 = unknown, 1 = Monday … 7 = Sunday),
/// Fractions256 (1, 1/256 s), Adjust Reason (1, flags). Day of week above 7 is rejected.
public struct CurrentTime: Hashable, Sendable {
    /// The Adjust Reason flags.
    public struct AdjustReason: OptionSet, Hashable, Sendable {
        public let rawValue: UInt8
        public init(rawValue: UInt8) { self.rawValue = rawValue }

        public static let manualTimeUpdate = AdjustReason(rawValue: 1 << 0)
        public static let externalReferenceTimeUpdate = AdjustReason(rawValue: 1 << 1)
        public static let changeOfTimeZone = AdjustReason(rawValue: 1 << 2)
        public static let changeOfDaylightSavingTime = AdjustReason(rawValue: 1 << 3)
    }

    /// ISO day of week; `unknown` is the specification's 0.
    public enum DayOfWeek: UInt8, Hashable, Sendable, CaseIterable {
        case unknown = 0, monday, tuesday, wednesday, thursday, friday, saturday, sunday
    }

    public var dateTime: DateTime
    public var dayOfWeek: DayOfWeek
    /// Sub-second part, in 1/256 s.
    public var fractions256: UInt8
    public var adjustReason: AdjustReason

    public init(dateTime: DateTime, dayOfWeek: DayOfWeek, fractions256: UInt8 = 0, adjustReason: AdjustReason = []) {
        self.dateTime = dateTime
        self.dayOfWeek = dayOfWeek
        self.fractions256 = fractions256
        self.adjustReason = adjustReason
    }

    public static func decode(_ bytes: some Collection<UInt8>) throws(GATTDecodeError) -> CurrentTime {
        var reader = ByteReader(bytes)
        let dateTime = try DateTime.read(from: &reader)
        let dayOffset = reader.offset
        let dayValue = try reader.readUInt8("day_of_week")
        guard let dayOfWeek = DayOfWeek(rawValue: dayValue) else {
            throw GATTDecodeError(field: "day_of_week", offset: dayOffset, reason: .outOfRange(value: UInt64(dayValue)))
        }
        let fractions = try reader.readUInt8("fractions256")
        let reason = try AdjustReason(rawValue: reader.readUInt8("adjust_reason"))
        return CurrentTime(dateTime: dateTime, dayOfWeek: dayOfWeek, fractions256: fractions, adjustReason: reason)
    }

    public func encode() -> [UInt8] {
        var writer = ByteWriter(capacity: 10)
        dateTime.write(to: &writer)
        writer.writeUInt8(dayOfWeek.rawValue)
        writer.writeUInt8(fractions256)
        writer.writeUInt8(adjustReason.rawValue)
        return writer.bytes
    }
}

extension CurrentTime: KeyValueRenderable {
    public var keyValuePairs: [(key: String, value: String)] {
        var pairs: [(key: String, value: String)] = [
            ("date_time", dateTime.description),
            ("day_of_week", "\(dayOfWeek)"),
            ("fractions256", String(fractions256)),
        ]
        if !adjustReason.isEmpty { pairs.append(("adjust_reason", adjustReason.names)) }
        return pairs
    }

    public var summary: String { "\(dateTime) (\(dayOfWeek))" }
}

extension CurrentTime.AdjustReason {
    /// Comma-separated snake_case names of the set flags, reserved bits as `bit_N`.
    var names: String {
        FlagNames.join(rawValue: UInt64(rawValue), names: [
            "manual_time_update", "external_reference_time_update", "change_of_time_zone", "change_of_dst",
        ])
    }
}
