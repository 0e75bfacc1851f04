/// The optional fields both PLX measurements (Spot-Check 0x2A5E and Continuous 0x2A5F) end with,
/// in the specification's order: Measurement Status (2), Device and Sensor Status (3) and Pulse
/// Amplitude Index (SFLOAT, %). One place reads, writes and renders them for both.
struct PLXStatusFields {
    var measurementStatus: PLXMeasurementStatus?
    var deviceAndSensorStatus: PLXDeviceAndSensorStatus?
    var pulseAmplitudeIndexPercent: MedicalFloat?

    /// Reads the fields whose presence flags are set.
    static func read(
        from reader: inout ByteReader<some Collection<UInt8>>,
        measurementStatus: Bool, deviceAndSensorStatus: Bool, pulseAmplitudeIndex: Bool
    ) throws(GATTDecodeError) -> PLXStatusFields {
        let status = measurementStatus ? try PLXMeasurementStatus(rawValue: reader.readUInt16("measurement_status")) : nil
        let sensor = deviceAndSensorStatus
            ? try PLXDeviceAndSensorStatus(rawValue: reader.readUInt24("device_sensor_status")) : nil
        let pai = pulseAmplitudeIndex ? try reader.readSFLOAT("pulse_amplitude_index") : nil
        return PLXStatusFields(measurementStatus: status, deviceAndSensorStatus: sensor, pulseAmplitudeIndexPercent: pai)
    }

    func write(to writer: inout ByteWriter) throws(GATTEncodeError) {
        if let measurementStatus { writer.writeUInt16(measurementStatus.rawValue) }
        if let deviceAndSensorStatus {
            try writer.writeUInt24(deviceAndSensorStatus.rawValue, field: "device_sensor_status")
        }
        if let pulseAmplitudeIndexPercent {
            try writer.writeSFLOAT(pulseAmplitudeIndexPercent, field: "pulse_amplitude_index")
        }
    }

    func render(into pairs: inout [(key: String, value: String)]) {
        if let measurementStatus { pairs.append(("measurement_status", measurementStatus.names)) }
        if let deviceAndSensorStatus { pairs.append(("device_sensor_status", deviceAndSensorStatus.names)) }
        if let pulseAmplitudeIndexPercent {
            pairs.append(("pulse_amplitude_index_percent", pulseAmplitudeIndexPercent.description))
        }
    }
}
