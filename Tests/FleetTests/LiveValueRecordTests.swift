import Fleet
import FleetCore
import Foundation
import GATT
import Logging
import PropertyBased
import Synchronization
import Testing

@Suite("The value JSON record")
struct LiveValueRecordTests {
    static let device = DeviceID(address: BluetoothAddress("C0:FF:EE:00:00:01")!)
    /// 2026-11-24T19:36:14.123456Z
    static let received = Date(timeIntervalSince1970: 1_795_548_974.123456)

    static func record(_ uuid: BluetoothUUID, _ bytes: [UInt8], session: String? = "12-3") -> LiveValueRecord {
        let result: Result<CharacteristicEvent, GATTDecodeError>
        do throws(GATTDecodeError) {
            result = .success(try CharacteristicRegistry.standard.decode(bytes, from: uuid))
        } catch {
            result = .failure(error)
        }
        return LiveValueRecord(
            device: device, characteristic: uuid.description, receivedAt: received, result: result, bytes: bytes,
            session: session, name: "Strap", adapter: AdapterID("hci0"))
    }

    static func json(_ record: LiveValueRecord) -> String { String(decoding: record.jsonBytes(), as: UTF8.self) }

    /// The record's `value` object, re-serialised by Foundation (which also proves it is JSON).
    static func value(_ record: LiveValueRecord) throws -> [String: Any] {
        let object = try #require(try JSONSerialization.jsonObject(with: Data(record.jsonBytes())) as? [String: Any])
        return try #require(object["value"] as? [String: Any])
    }

    @Test func aHeartRateRecordIsOneCompactObjectWithEveryEnvelopeKeyInOrder() {
        // Contact detected, energy 1200 kJ, RR 812 and 800 (1/1024 s).
        let record = Self.record(.heartRateMeasurement, [0x1E, 72, 0xB0, 0x04, 0x2C, 0x03, 0x20, 0x03])
        #expect(record.kind == "heart_rate")
        #expect(
            Self.json(record)
                == #"{"kind":"heart_rate","device":"C0:FF:EE:00:00:01","address_type":"public","adapter":"hci0","name":"Strap","#
                + #""session":"12-3","characteristic":"00002a37-0000-1000-8000-00805f9b34fb","time":"2026-11-24T19:36:14.123456Z","#
                + #""value":{"name":"heart_rate_measurement","heart_rate_bpm":72,"rr_intervals_ms":[793.0,781.2],"#
                + #""sensor_contact":"detected","energy_expended_kj":1200},"summary":"72 bpm, RR 793/781 ms","hex":"1e48b0042c032003"}"#)
    }

    @Test func unknownKeysAreLeftOutAndTheWallClockIsUTC() {
        let record = LiveValueRecord(
            device: DeviceID(address: BluetoothAddress("C0:FF:EE:00:00:02")!, addressType: .random),
            characteristic: "0000fff1-0000-1000-8000-00805f9b34fb", receivedAt: Date(timeIntervalSince1970: 0),
            result: .success(.raw(RawCharacteristicValue(uuid: BluetoothUUID(0xFFF1), bytes: [0xDE, 0xAD]))), bytes: [0xDE, 0xAD],
            session: nil)
        #expect(record.kind == "raw")
        #expect(
            Self.json(record)
                == #"{"kind":"raw","device":"C0:FF:EE:00:00:02","address_type":"random","characteristic":"0000fff1-0000-1000-8000-00805f9b34fb","#
                + #""time":"1970-01-01T00:00:00.000000Z","value":{"name":"raw"},"hex":"dead"}"#)
    }

    @Test func bytesTheDecoderRefusesAreAnInvalidRecordWithTheFieldAndOffset() throws {
        // RR flag set with an odd trailing byte.
        let record = Self.record(.heartRateMeasurement, [0x10, 72, 0x01])
        #expect(record.kind == "invalid")
        #expect(
            Self.json(record).hasSuffix(
                #""time":"2026-11-24T19:36:14.123456Z","error":{"field":"rr_interval","offset":2,"#
                    + #""message":"rr_interval at offset 2: truncated, needs 2 byte(s), 1 left"},"hex":"104801"}"#))
        let empty = Self.record(.batteryLevel, [])
        #expect(empty.kind == "invalid")
        let object = try #require(try JSONSerialization.jsonObject(with: Data(empty.jsonBytes())) as? [String: Any])
        #expect(object["value"] == nil && object["summary"] == nil && object["hex"] as? String == "")
    }

    @Test func everyKindHasItsTypedValue() throws {
        // (characteristic, bytes, kind, the record's `value` object)
        let cases: [(BluetoothUUID, [UInt8], String, String)] = [
            (.batteryLevel, [87], "battery",
             #"{"name":"battery_level","battery_level_percent":87}"#),
            (.bodySensorLocation, [1], "body_sensor_location",
             #"{"name":"body_sensor_location","body_sensor_location":"chest"}"#),
            (.modelNumberString, Array("HRM-\"Pro\"\n".utf8), "device_information",
             #"{"name":"device_information","model_number":"HRM-\"Pro\"\n"}"#),
            (.systemID, [1, 2, 3, 4, 5, 6, 7, 8], "system_id",
             #"{"name":"system_id","manufacturer_identifier":"0504030201","organizationally_unique_identifier":"080706"}"#),
            (.pnpID, [1, 0x0D, 0x00, 0x34, 0x12, 0x10, 0x02], "pnp_id",
             #"{"name":"pnp_id","vendor_id_source":"bluetooth_sig","vendor_id":"0x000d","product_id":"0x1234","product_version":"2.1.0"}"#),
            // 36.5 °C with a timestamp, in the ear.
            (.temperatureMeasurement, [0x06, 0x6D, 0x01, 0x00, 0xFF, 0xEA, 0x07, 11, 24, 19, 36, 14, 3], "temperature",
             #"{"name":"temperature_measurement","temperature":36.5,"temperature_unit":"celsius","timestamp":"2026-11-24T19:36:14","temperature_type":"ear","temperature_celsius":36.5}"#),
            // 97.7 °F is 36.5 °C.
            (.intermediateTemperature, [0x01, 0xD1, 0x03, 0x00, 0xFF], "temperature",
             #"{"name":"intermediate_temperature","temperature":97.7,"temperature_unit":"fahrenheit","temperature_celsius":36.5}"#),
            // No number: NaN stays a named string in both fields.
            (.temperatureMeasurement, [0x00, 0xFF, 0xFF, 0x7F, 0x00], "temperature",
             #"{"name":"temperature_measurement","temperature":"nan","temperature_unit":"celsius","temperature_celsius":"nan"}"#),
            (.plxSpotCheckMeasurement, [0x00, 0x61, 0x00, 0x48, 0x00], "spo2",
             #"{"name":"plx_spot_check_measurement","spo2_percent":97,"pulse_rate_bpm":72}"#),
            (.plxContinuousMeasurement, [0x04, 0x61, 0x00, 0x48, 0x00, 0x20, 0x00], "spo2",
             #"{"name":"plx_continuous_measurement","spo2_percent":97,"pulse_rate_bpm":72,"measurement_status":["measurement_ongoing"]}"#),
            (.bloodPressureMeasurement, [0x0C, 0x78, 0x00, 0x50, 0x00, 0x5D, 0x00, 0x48, 0x00, 1], "blood_pressure",
             #"{"name":"blood_pressure_measurement","systolic":120,"diastolic":80,"mean_arterial_pressure":93,"pressure_unit":"mmhg","pulse_rate_bpm":72,"user_id":1}"#),
            (.weightMeasurement, [0x00, 0xA4, 0x38], "weight",
             #"{"name":"weight_measurement","weight":72.500,"weight_unit":"kg"}"#),
            (.weightMeasurement, [0x00, 0xFF, 0xFF], "weight",
             #"{"name":"weight_measurement","weight":"unsuccessful","weight_unit":"kg"}"#),
            (.rscMeasurement, [0x04, 0x80, 0x03, 170], "rsc",
             #"{"name":"rsc_measurement","speed_m_per_s":3.500,"cadence_steps_per_min":170,"motion":"running"}"#),
            (.cscMeasurement, [0x02, 0x0A, 0x00, 0x00, 0x04], "csc",
             #"{"name":"csc_measurement","cumulative_crank_revolutions":10,"last_crank_event_time_s":1.000}"#),
            (.currentTime, [0xEA, 0x07, 11, 24, 19, 36, 14, 2, 128, 0x01], "current_time",
             #"{"name":"current_time","date_time":"2026-11-24T19:36:14","day_of_week":"tuesday","fractions256":128,"adjust_reason":["manual_time_update"]}"#),
            (.dateTime, [0xEA, 0x07, 11, 24, 19, 36, 14], "date_time",
             #"{"name":"date_time","date_time":"2026-11-24T19:36:14"}"#),
            (BluetoothUUID(0xFFF1), [0xDE, 0xAD], "raw",
             #"{"name":"raw"}"#),
        ]
        for (uuid, bytes, kind, value) in cases {
            let record = Self.record(uuid, bytes)
            #expect(record.kind == kind, "\(uuid)")
            let next = kind == "raw" ? #""hex":"# : #""summary":"#
            #expect(Self.json(record).contains(#""time":"2026-11-24T19:36:14.123456Z","value":\#(value),\#(next)"#), "\(uuid)")
            // Foundation reads it back: the record is JSON.
            #expect(try Self.value(record)["name"] as? String == (try record.result.get()).name)
        }
    }

    @Test func anyBytesOnAnyCharacteristicMakeARecordFoundationReads() throws {
        var random = SeededRandom(seed: 17)
        let uuids = CharacteristicRegistry.standard.registeredUUIDs + [BluetoothUUID(0xFFF1)]
        for round in 0..<4000 {
            let uuid = uuids[round % uuids.count]
            let bytes = (0..<Int.random(in: 0...24, using: &random)).map { _ in UInt8.random(in: 0...255, using: &random) }
            let record = Self.record(uuid, bytes, session: round % 2 == 0 ? nil : "\(round % 7)-\(round)")
            let object = try JSONSerialization.jsonObject(with: Data(record.jsonBytes())) as? [String: Any]
            #expect(object?["kind"] as? String == record.kind, "\(uuid) \(bytes)")
            #expect(object?["hex"] as? String == bytes.map { String(format: "%02x", $0) }.joined())
        }
    }

    @Test func fahrenheitIsConvertedToCelsiusToTwoDecimals() {
        // 98.6 °F = 37 °C; -40 °F = -40 °C; 100 °F = 37.777… → 37.78; 32 °F = 0.
        for (bits, celsius) in [([0xDA, 0x03, 0x00, 0xFF], "37"), ([0xD8, 0xFF, 0xFF, 0x00], "-40"),
                                ([0x64, 0x00, 0x00, 0x00], "37.78"), ([0x20, 0x00, 0x00, 0x00], "0")] as [([UInt8], String)] {
            let record = Self.record(.temperatureMeasurement, [0x01] + bits)
            #expect(Self.json(record).contains(#""temperature_celsius":\#(celsius)}"#), "\(bits)")
        }
    }

    @Test func fieldsDocumentedAsNumbersAreJSONNumbers() throws {
        let record = Self.record(.heartRateMeasurement, [0x10, 60, 0x00, 0x04])
        let text = Self.json(record)
        #expect(text.contains(#""heart_rate_bpm":60,"rr_intervals_ms":[1000.0]"#))
        let value = try Self.value(record)
        #expect(value["heart_rate_bpm"] is NSNumber)
    }

    @Test func aValueFromThePipelineKeepsItsDeviceCharacteristicBytesAndTime() throws {
        let pipeline = ValuePipeline(logger: Logger(label: "record-test") { _ in SwiftLogNoOpLogHandler() })
        let seen = Mutex<[LiveValueRecord]>([])
        pipeline.observe { value in seen.withLock { $0.append(LiveValueRecord(value, session: "2-7")) } }
        let before = Date()
        pipeline.ingest(device: Self.device, characteristic: BluetoothUUID.batteryLevel.description, bytes: [42])
        let record = try #require(seen.withLock { $0.first })
        #expect(record.kind == "battery" && record.session == "2-7" && record.bytes == [42] && record.device == Self.device)
        #expect(record.receivedAt >= before && record.receivedAt <= Date())
        let object = try #require(try JSONSerialization.jsonObject(with: Data(record.jsonBytes())) as? [String: Any])
        #expect(object["characteristic"] as? String == "00002a19-0000-1000-8000-00805f9b34fb")
        #expect(object["session"] as? String == "2-7")
        #expect(object["adapter"] == nil && object["name"] == nil)
    }

    /// The state topic's `last_value_time` (MQTT), in the value JSON's calendar.
    @Test func utcSecondsMatchesFoundation() async {
        let formatter = ISO8601DateFormatter()
        await propertyCheck(input: Gen.int(in: -2_000_000_000...8_000_000_000)) { seconds in
            let date = Date(timeIntervalSince1970: Double(seconds))
            #expect(LiveValueRecord.utcSeconds(date) == formatter.string(from: date))
        }
    }
}
