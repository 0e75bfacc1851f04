import DeterministicRandom
import GATT
import Glibc

/// The physiological and motion signals of one wearable: each call to `next(for:mtu:)` returns the
/// next notification payload of a characteristic, encoded by the GATT module's encoders.
///
/// Deterministic: driven only by the device's own seeded generator.
struct WearableSignals: Sendable {
    private var random: SeededRandom
    private var beatsPerMinute = 72.0
    private var battery: UInt8 = 87
    private var temperatureHundredths = 3668
    private var sequence: UInt16 = 0
    /// The motion band's streaming rate, changed by its control command 0x01.
    private(set) var motionRateHz: Double
    /// Payload size of motion notifications; 0 means the largest that fits (MTU − 3).
    private(set) var motionPayloadSize: Int
    /// Motion notifications carry their send time after the sequence number.
    let timestamps: Bool

    init(seed: UInt64, motionRateHz: Double, motionPayloadSize: Int = 0, timestamps: Bool = false) {
        random = SeededRandom(seed: seed)
        self.motionRateHz = motionRateHz
        self.motionPayloadSize = motionPayloadSize
        self.timestamps = timestamps
    }

    /// Sets the motion stream's rate (Hz, 1–1000) and payload size (0 = MTU − 3, at most 512);
    /// false, changing nothing, when either is out of range.
    mutating func setMotionStream(rateHz: Double, payloadSize: Int) -> Bool {
        guard (1...1000).contains(rateHz), (0...512).contains(payloadSize) else { return false }
        motionRateHz = rateHz
        motionPayloadSize = payloadSize
        return true
    }

    /// CLOCK_MONOTONIC in nanoseconds: comparable across processes on the same machine.
    static func monotonicNanoseconds() -> UInt64 {
        var now = timespec()
        clock_gettime(CLOCK_MONOTONIC, &now)
        return UInt64(now.tv_sec) * 1_000_000_000 + UInt64(now.tv_nsec)
    }

    mutating func next(for uuid: BluetoothUUID, mtu: UInt16) -> [UInt8] {
        switch uuid {
        case .heartRateMeasurement: return heartRate()
        case .batteryLevel:
            if random.unit() < 0.3, battery > 5 { battery -= 1 }
            return BatteryLevel(percent: battery)?.encode() ?? [battery]
        case .temperatureMeasurement:
            temperatureHundredths = max(3550, min(3850, temperatureHundredths + Int(random.next() % 7) - 3))
            let value = TemperatureMeasurement(
                temperature: MedicalFloat(mantissa: Int32(temperatureHundredths), exponent: -2), unit: .celsius)
            return (try? value.encode()) ?? []
        case .plxContinuousMeasurement:
            let spo2 = 95 + Int32(random.next() % 5)
            let reading = PLXReading(
                spo2Percent: MedicalFloat(mantissa: spo2, exponent: 0),
                pulseRateBPM: MedicalFloat(mantissa: Int32(beatsPerMinute.rounded()), exponent: 0))
            return (try? PLXContinuousMeasurement(normal: reading).encode()) ?? []
        case .motionBandData: return motionSamples(mtu: mtu)
        default: return []
        }
    }

    /// A heart rate that wanders like a resting wearer's, with the RR intervals that match it.
    private mutating func heartRate() -> [UInt8] {
        beatsPerMinute = max(50, min(170, beatsPerMinute + (random.unit() - 0.5) * 4))
        let bpm = UInt16(beatsPerMinute.rounded())
        let rrMilliseconds = 60_000 / beatsPerMinute
        let count = beatsPerMinute > 90 ? 2 : 1
        let intervals = (0..<count).map { _ in
            let jitter = (random.unit() - 0.5) * 30
            return HeartRateMeasurement.RRInterval(rawValue: UInt16(max(1, (rrMilliseconds + jitter) * 1.024)))
        }
        let measurement = HeartRateMeasurement(
            beatsPerMinute: bpm, sensorContact: .detected, rrIntervals: intervals)
        return (try? measurement.encode()) ?? []
    }

    /// `[sequence u16 LE]`, with `timestamps` the send time (`[CLOCK_MONOTONIC ns u64 LE]`,
    /// cut short if the payload is shorter than 10 bytes), then 6-byte accelerometer samples
    /// (x, y, z as Int16 LE) up to the size.
    private mutating func motionSamples(mtu: UInt16) -> [UInt8] {
        let limit = Int(mtu) - 3
        let size = motionPayloadSize == 0 ? limit : min(limit, motionPayloadSize)
        var bytes: [UInt8] = []
        bytes.reserveCapacity(size)
        bytes.append(UInt8(truncatingIfNeeded: sequence))
        bytes.append(UInt8(truncatingIfNeeded: sequence >> 8))
        sequence &+= 1
        if timestamps {
            let sent = Self.monotonicNanoseconds()
            for shift in stride(from: 0, to: 64, by: 8) where bytes.count < size {
                bytes.append(UInt8(truncatingIfNeeded: sent >> UInt64(shift)))
            }
        }
        while bytes.count < size {
            let sample = UInt16(truncatingIfNeeded: Int(random.next() % 2048) - 1024)
            bytes.append(UInt8(truncatingIfNeeded: sample))
            if bytes.count < size { bytes.append(UInt8(truncatingIfNeeded: sample >> 8)) }
        }
        return bytes
    }

    // MARK: - Measurement devices

    /// One blood-pressure reading taken at `time`: a resting adult's, in mmHg, with the pulse.
    mutating func bloodPressure(at time: DateTime) -> [UInt8] {
        let systolic = 105 + Int32(random.next() % 36)
        let diastolic = 62 + Int32(random.next() % 29)
        let pulse = 55 + Int32(random.next() % 36)
        let measurement = BloodPressureMeasurement(
            systolic: MedicalFloat(mantissa: systolic, exponent: 0), diastolic: MedicalFloat(mantissa: diastolic, exponent: 0),
            meanArterialPressure: MedicalFloat(mantissa: diastolic + (systolic - diastolic) / 3, exponent: 0),
            unit: .millimetersOfMercury, timestamp: time, pulseRateBPM: MedicalFloat(mantissa: pulse, exponent: 0))
        return (try? measurement.encode()) ?? []
    }

    /// One weighing taken at `time`: 55–95 kg at the scale's 0.005 kg resolution.
    mutating func weight(at time: DateTime) -> [UInt8] {
        let raw = UInt16(11_000 + random.next() % 8_000)
        return WeightMeasurement(unitSystem: .si, weightRaw: raw, timestamp: time).encode()
    }

    // MARK: - Motion band control

    /// Executes a control command and returns the reply notification.
    ///
    /// Commands: `01 lo hi` sets the rate (Hz, 1–1000); `02 size` sets the payload size (0 = MTU−3);
    /// `03` asks for status. Replies are `80|opcode, status, …` with status 0 for success,
    /// 1 for an unknown opcode, 2 for bad parameters.
    mutating func control(_ command: [UInt8]) -> [UInt8] {
        guard let opcode = command.first else { return [0x80, 0x02] }
        let reply = 0x80 | opcode
        switch opcode {
        case 0x01:
            guard command.count == 3 else { return [reply, 0x02] }
            let rate = UInt16(command[1]) | UInt16(command[2]) << 8
            guard (1...1000).contains(rate) else { return [reply, 0x02] }
            motionRateHz = Double(rate)
            return [reply, 0x00]
        case 0x02:
            guard command.count == 2 else { return [reply, 0x02] }
            motionPayloadSize = Int(command[1])
            return [reply, 0x00]
        case 0x03:
            let rate = UInt16(clamping: Int(motionRateHz))
            return [reply, 0x00, UInt8(truncatingIfNeeded: rate), UInt8(truncatingIfNeeded: rate >> 8), battery]
        default:
            return [reply, 0x01]
        }
    }
}
