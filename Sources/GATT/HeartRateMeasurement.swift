// The notification a heart-rate strap sends every second or so; the hottest decode path in the
// daemon, so it reads straight from the payload and allocates only for RR intervals.

/// The Heart Rate Measurement characteristic (0x2A37).
///
/// Layout: Flags (1); Heart Rate (1 or 2, bpm, width from `heartRateIs16Bit`); Energy Expended
/// (2, kJ) when `energyExpendedPresent`; RR intervals (2 each, 1/1024 s) to the end of the
/// payload when `rrIntervalsPresent`. An odd trailing byte in the RR list is a truncation error.
public struct HeartRateMeasurement: Hashable, Sendable {
    /// The Flags field.
    public struct Flags: OptionSet, Hashable, Sendable {
        public let rawValue: UInt8
        public init(rawValue: UInt8) { self.rawValue = rawValue }

        public static let heartRateIs16Bit = Flags(rawValue: 1 << 0)
        public static let sensorContactDetected = Flags(rawValue: 1 << 1)
        public static let sensorContactSupported = Flags(rawValue: 1 << 2)
        public static let energyExpendedPresent = Flags(rawValue: 1 << 3)
        public static let rrIntervalsPresent = Flags(rawValue: 1 << 4)
    }

    /// Skin contact, from flag bits 1 and 2 (bit 1 alone still means "not supported").
    public enum SensorContact: String, Hashable, Sendable {
        case notSupported = "not_supported"
        case notDetected = "not_detected"
        case detected
    }

    /// Width of the heart rate field on the wire.
    public enum ValueFormat: Hashable, Sendable {
        case uint8, uint16
    }

    /// One beat-to-beat interval, in the wire unit of 1/1024 s.
    public struct RRInterval: Hashable, Sendable {
        public var rawValue: UInt16
        public init(rawValue: UInt16) { self.rawValue = rawValue }

        public var seconds: Double { Double(rawValue) / 1024 }
        public var milliseconds: Double { Double(rawValue) * 1000 / 1024 }

        /// Milliseconds rounded half-to-even to one decimal, as rendered in `rr_intervals_ms`.
        var millisecondsText: String { DecimalText.ratio(Int64(rawValue) * 1000, over: 1024, fractionDigits: 1) }
        /// Whole milliseconds, rounded half-to-even, as in the summary.
        var roundedMillisecondsText: String { DecimalText.ratio(Int64(rawValue) * 1000, over: 1024, fractionDigits: 0) }
    }

    public var beatsPerMinute: UInt16
    public var valueFormat: ValueFormat
    public var sensorContact: SensorContact
    /// Cumulative since the last reset; 0xFFFF means "65535 kJ or more" (it saturates).
    public var energyExpendedKilojoules: UInt16?
    /// Empty when the RR flag is clear or the device sent the flag with no intervals.
    public var rrIntervals: [RRInterval]

    /// `valueFormat` defaults to the narrowest width that holds `beatsPerMinute`.
    public init(
        beatsPerMinute: UInt16, valueFormat: ValueFormat? = nil, sensorContact: SensorContact = .notSupported,
        energyExpendedKilojoules: UInt16? = nil, rrIntervals: [RRInterval] = []
    ) {
        self.beatsPerMinute = beatsPerMinute
        self.valueFormat = valueFormat ?? (beatsPerMinute > UInt8.max ? .uint16 : .uint8)
        self.sensorContact = sensorContact
        self.energyExpendedKilojoules = energyExpendedKilojoules
        self.rrIntervals = rrIntervals
    }

    /// The flags `encode()` writes.
    public var flags: Flags {
        var flags: Flags = []
        if valueFormat == .uint16 { flags.insert(.heartRateIs16Bit) }
        switch sensorContact {
        case .notSupported: break
        case .notDetected: flags.insert(.sensorContactSupported)
        case .detected: flags.formUnion([.sensorContactSupported, .sensorContactDetected])
        }
        if energyExpendedKilojoules != nil { flags.insert(.energyExpendedPresent) }
        if !rrIntervals.isEmpty { flags.insert(.rrIntervalsPresent) }
        return flags
    }

    public static func decode(_ bytes: some Collection<UInt8>) throws(GATTDecodeError) -> HeartRateMeasurement {
        var reader = ByteReader(bytes)
        let flags = try Flags(rawValue: reader.readUInt8("flags"))
        let bpm: UInt16
        let format: ValueFormat
        if flags.contains(.heartRateIs16Bit) {
            bpm = try reader.readUInt16("heart_rate")
            format = .uint16
        } else {
            bpm = try UInt16(reader.readUInt8("heart_rate"))
            format = .uint8
        }
        let contact: SensorContact =
            !flags.contains(.sensorContactSupported) ? .notSupported
            : flags.contains(.sensorContactDetected) ? .detected : .notDetected
        let energy = flags.contains(.energyExpendedPresent) ? try reader.readUInt16("energy_expended") : nil
        var intervals: [RRInterval] = []
        if flags.contains(.rrIntervalsPresent) {
            intervals.reserveCapacity(reader.remainingCount / 2)
            while !reader.isAtEnd {
                intervals.append(try RRInterval(rawValue: reader.readUInt16("rr_interval")))
            }
        }
        return HeartRateMeasurement(
            beatsPerMinute: bpm, valueFormat: format, sensorContact: contact,
            energyExpendedKilojoules: energy, rrIntervals: intervals)
    }

    public func encode() throws(GATTEncodeError) -> [UInt8] {
        var writer = ByteWriter(capacity: 4 + 2 * rrIntervals.count)
        writer.writeUInt8(flags.rawValue)
        switch valueFormat {
        case .uint8:
            guard let narrow = UInt8(exactly: beatsPerMinute) else {
                throw GATTEncodeError(field: "heart_rate", message: "\(beatsPerMinute) does not fit in UInt8 format")
            }
            writer.writeUInt8(narrow)
        case .uint16:
            writer.writeUInt16(beatsPerMinute)
        }
        if let energyExpendedKilojoules { writer.writeUInt16(energyExpendedKilojoules) }
        for interval in rrIntervals { writer.writeUInt16(interval.rawValue) }
        return writer.bytes
    }
}

extension HeartRateMeasurement: KeyValueRenderable {
    public var keyValuePairs: [(key: String, value: String)] {
        var pairs: [(key: String, value: String)] = [("heart_rate_bpm", String(beatsPerMinute))]
        if !rrIntervals.isEmpty {
            pairs.append(("rr_intervals_ms", rrIntervals.map(\.millisecondsText).joined(separator: ",")))
        }
        pairs.append(("sensor_contact", sensorContact.rawValue))
        if let energyExpendedKilojoules { pairs.append(("energy_expended_kj", String(energyExpendedKilojoules))) }
        return pairs
    }

    public var summary: String {
        var text = "\(beatsPerMinute) bpm"
        if !rrIntervals.isEmpty {
            text += ", RR " + rrIntervals.map(\.roundedMillisecondsText).joined(separator: "/") + " ms"
        }
        if sensorContact == .notDetected { text += ", no contact" }
        return text
    }
}
