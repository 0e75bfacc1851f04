// Cycling sensors send cumulative counters and event times (1/1024 s); speed and cadence are
// derived from two consecutive notifications by the consumer, so the raw counters are kept.

/// The CSC (Cycling Speed and Cadence) Measurement characteristic (0x2A5B).
///
/// Layout: Flags (1); Cumulative Wheel Revolutions (4) and Last Wheel Event Time (2, 1/1024 s)
/// when `wheelRevolutionDataPresent`; Cumulative Crank Revolutions (2) and Last Crank Event Time
/// (2, 1/1024 s) when `crankRevolutionDataPresent`.
public struct CSCMeasurement: Hashable, Sendable {
    /// The Flags field.
    public struct Flags: OptionSet, Hashable, Sendable {
        public let rawValue: UInt8
        public init(rawValue: UInt8) { self.rawValue = rawValue }

        public static let wheelRevolutionDataPresent = Flags(rawValue: 1 << 0)
        public static let crankRevolutionDataPresent = Flags(rawValue: 1 << 1)
    }

    /// Wheel counters: revolutions since reset and the time of the last one (1/1024 s, wraps).
    public struct WheelData: Hashable, Sendable {
        public var cumulativeRevolutions: UInt32
        public var lastEventTime1024: UInt16
        public init(cumulativeRevolutions: UInt32, lastEventTime1024: UInt16) {
            self.cumulativeRevolutions = cumulativeRevolutions
            self.lastEventTime1024 = lastEventTime1024
        }
        public var lastEventTimeSeconds: Double { Double(lastEventTime1024) / 1024 }
    }

    /// Crank counters: revolutions since reset and the time of the last one (1/1024 s, wraps).
    public struct CrankData: Hashable, Sendable {
        public var cumulativeRevolutions: UInt16
        public var lastEventTime1024: UInt16
        public init(cumulativeRevolutions: UInt16, lastEventTime1024: UInt16) {
            self.cumulativeRevolutions = cumulativeRevolutions
            self.lastEventTime1024 = lastEventTime1024
        }
        public var lastEventTimeSeconds: Double { Double(lastEventTime1024) / 1024 }
    }

    public var wheel: WheelData?
    public var crank: CrankData?

    public init(wheel: WheelData? = nil, crank: CrankData? = nil) {
        self.wheel = wheel
        self.crank = crank
    }

    /// The flags `encode()` writes.
    public var flags: Flags {
        var flags: Flags = []
        if wheel != nil { flags.insert(.wheelRevolutionDataPresent) }
        if crank != nil { flags.insert(.crankRevolutionDataPresent) }
        return flags
    }

    public static func decode(_ bytes: some Collection<UInt8>) throws(GATTDecodeError) -> CSCMeasurement {
        var reader = ByteReader(bytes)
        let flags = try Flags(rawValue: reader.readUInt8("flags"))
        var wheel: WheelData?
        if flags.contains(.wheelRevolutionDataPresent) {
            let revolutions = try reader.readUInt32("cumulative_wheel_revolutions")
            let time = try reader.readUInt16("last_wheel_event_time")
            wheel = WheelData(cumulativeRevolutions: revolutions, lastEventTime1024: time)
        }
        var crank: CrankData?
        if flags.contains(.crankRevolutionDataPresent) {
            let revolutions = try reader.readUInt16("cumulative_crank_revolutions")
            let time = try reader.readUInt16("last_crank_event_time")
            crank = CrankData(cumulativeRevolutions: revolutions, lastEventTime1024: time)
        }
        return CSCMeasurement(wheel: wheel, crank: crank)
    }

    public func encode() -> [UInt8] {
        var writer = ByteWriter(capacity: 11)
        writer.writeUInt8(flags.rawValue)
        if let wheel {
            writer.writeUInt32(wheel.cumulativeRevolutions)
            writer.writeUInt16(wheel.lastEventTime1024)
        }
        if let crank {
            writer.writeUInt16(crank.cumulativeRevolutions)
            writer.writeUInt16(crank.lastEventTime1024)
        }
        return writer.bytes
    }
}

extension CSCMeasurement: KeyValueRenderable {
    public var keyValuePairs: [(key: String, value: String)] {
        var pairs: [(key: String, value: String)] = []
        if let wheel {
            pairs.append(("cumulative_wheel_revolutions", String(wheel.cumulativeRevolutions)))
            pairs.append(("last_wheel_event_time_s", DecimalText.ratio(Int64(wheel.lastEventTime1024), over: 1024, fractionDigits: 3)))
        }
        if let crank {
            pairs.append(("cumulative_crank_revolutions", String(crank.cumulativeRevolutions)))
            pairs.append(("last_crank_event_time_s", DecimalText.ratio(Int64(crank.lastEventTime1024), over: 1024, fractionDigits: 3)))
        }
        return pairs
    }

    public var summary: String {
        var parts: [String] = []
        if let wheel { parts.append("wheel \(wheel.cumulativeRevolutions) rev") }
        if let crank { parts.append("crank \(crank.cumulativeRevolutions) rev") }
        return parts.isEmpty ? "no revolution data" : parts.joined(separator: ", ")
    }
}
