// Foot pods stream speed and cadence; distances and lengths stay in their wire units (integers)
// and convert on demand, so nothing is rounded before it is logged.

/// The RSC (Running Speed and Cadence) Measurement characteristic (0x2A53).
///
/// Layout: Flags (1); Instantaneous Speed (2, 1/256 m/s); Instantaneous Cadence (1, steps/min);
/// Instantaneous Stride Length (2, cm) when `strideLengthPresent`; Total Distance (4, dm) when
/// `totalDistancePresent`. `running` carries no field.
public struct RSCMeasurement: Hashable, Sendable {
    /// The Flags field.
    public struct Flags: OptionSet, Hashable, Sendable {
        public let rawValue: UInt8
        public init(rawValue: UInt8) { self.rawValue = rawValue }

        public static let strideLengthPresent = Flags(rawValue: 1 << 0)
        public static let totalDistancePresent = Flags(rawValue: 1 << 1)
        /// Set: running; clear: walking.
        public static let running = Flags(rawValue: 1 << 2)
    }

    /// Walking or running, from the `running` flag; raw values are the rendering.
    public enum Motion: String, Hashable, Sendable {
        case walking, running
    }

    /// In 1/256 m/s.
    public var speedRaw: UInt16
    public var cadenceStepsPerMinute: UInt8
    public var strideLengthCentimeters: UInt16?
    public var totalDistanceDecimeters: UInt32?
    public var motion: Motion

    public init(
        speedRaw: UInt16, cadenceStepsPerMinute: UInt8, strideLengthCentimeters: UInt16? = nil,
        totalDistanceDecimeters: UInt32? = nil, motion: Motion = .walking
    ) {
        self.speedRaw = speedRaw
        self.cadenceStepsPerMinute = cadenceStepsPerMinute
        self.strideLengthCentimeters = strideLengthCentimeters
        self.totalDistanceDecimeters = totalDistanceDecimeters
        self.motion = motion
    }

    public var speedMetersPerSecond: Double { Double(speedRaw) / 256 }
    public var strideLengthMeters: Double? { strideLengthCentimeters.map { Double($0) / 100 } }
    public var totalDistanceMeters: Double? { totalDistanceDecimeters.map { Double($0) / 10 } }

    /// The flags `encode()` writes.
    public var flags: Flags {
        var flags: Flags = []
        if strideLengthCentimeters != nil { flags.insert(.strideLengthPresent) }
        if totalDistanceDecimeters != nil { flags.insert(.totalDistancePresent) }
        if motion == .running { flags.insert(.running) }
        return flags
    }

    public static func decode(_ bytes: some Collection<UInt8>) throws(GATTDecodeError) -> RSCMeasurement {
        var reader = ByteReader(bytes)
        let flags = try Flags(rawValue: reader.readUInt8("flags"))
        let speed = try reader.readUInt16("speed")
        let cadence = try reader.readUInt8("cadence")
        let stride = flags.contains(.strideLengthPresent) ? try reader.readUInt16("stride_length") : nil
        let distance = flags.contains(.totalDistancePresent) ? try reader.readUInt32("total_distance") : nil
        return RSCMeasurement(
            speedRaw: speed, cadenceStepsPerMinute: cadence, strideLengthCentimeters: stride,
            totalDistanceDecimeters: distance, motion: flags.contains(.running) ? .running : .walking)
    }

    public func encode() -> [UInt8] {
        var writer = ByteWriter(capacity: 10)
        writer.writeUInt8(flags.rawValue)
        writer.writeUInt16(speedRaw)
        writer.writeUInt8(cadenceStepsPerMinute)
        if let strideLengthCentimeters { writer.writeUInt16(strideLengthCentimeters) }
        if let totalDistanceDecimeters { writer.writeUInt32(totalDistanceDecimeters) }
        return writer.bytes
    }
}

extension RSCMeasurement: KeyValueRenderable {
    public var keyValuePairs: [(key: String, value: String)] {
        var pairs: [(key: String, value: String)] = [
            ("speed_m_per_s", DecimalText.ratio(Int64(speedRaw), over: 256, fractionDigits: 3)),
            ("cadence_steps_per_min", String(cadenceStepsPerMinute)),
        ]
        if let strideLengthCentimeters {
            pairs.append(("stride_length_m", DecimalText.scaled(Int64(strideLengthCentimeters), exponent: -2)))
        }
        if let totalDistanceDecimeters {
            pairs.append(("total_distance_m", DecimalText.scaled(Int64(totalDistanceDecimeters), exponent: -1)))
        }
        pairs.append(("motion", motion.rawValue))
        return pairs
    }

    public var summary: String {
        "\(DecimalText.ratio(Int64(speedRaw), over: 256, fractionDigits: 2)) m/s, \(cadenceStepsPerMinute) spm, \(motion.rawValue)"
    }
}
