// The PLX characteristics repeat the same SpO2 + pulse rate pair (normal, fast, slow); one type
// keeps the units attached to each occurrence.

/// An SpO2 and pulse rate pair as carried by the PLX characteristics: two SFLOATs, SpO2 in
/// percent and pulse rate in beats per minute.
public struct PLXReading: Hashable, Sendable {
    public var spo2Percent: MedicalFloat
    public var pulseRateBPM: MedicalFloat

    public init(spo2Percent: MedicalFloat, pulseRateBPM: MedicalFloat) {
        self.spo2Percent = spo2Percent
        self.pulseRateBPM = pulseRateBPM
    }

    static func read(
        from reader: inout ByteReader<some Collection<UInt8>>, spo2Field: StaticString, pulseField: StaticString
    ) throws(GATTDecodeError) -> PLXReading {
        let spo2 = try reader.readSFLOAT(spo2Field)
        let pulse = try reader.readSFLOAT(pulseField)
        return PLXReading(spo2Percent: spo2, pulseRateBPM: pulse)
    }

    func write(to writer: inout ByteWriter, spo2Field: String, pulseField: String) throws(GATTEncodeError) {
        try writer.writeSFLOAT(spo2Percent, field: spo2Field)
        try writer.writeSFLOAT(pulseRateBPM, field: pulseField)
    }
}
