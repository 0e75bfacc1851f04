@testable import Fleet
import FleetCore
import Foundation
import GATT
import Logging
import Synchronization
import Testing

@Suite("The watch writer's value encoder")
struct LiveValueEncoderTests {
    static let infos: [WatchHub.DeviceInfo?] = [
        nil, WatchHub.DeviceInfo(session: "1-3"), WatchHub.DeviceInfo(session: "1-3", name: "Strap", adapter: AdapterID("hci0")),
        WatchHub.DeviceInfo(name: "Ann's \"strap\"\n\\ é", adapter: AdapterID("hci1")), WatchHub.DeviceInfo(session: "\(UInt64.max)-\(UInt64.max)"),
    ]

    static func decode(_ uuid: BluetoothUUID, _ bytes: [UInt8]) -> Result<CharacteristicEvent, GATTDecodeError> {
        do throws(GATTDecodeError) {
            return .success(try CharacteristicRegistry.standard.decode(bytes, from: uuid))
        } catch {
            return .failure(error)
        }
    }

    /// The encoder's record and `LiveValueRecord.jsonBytes()`'s, as text.
    static func both(
        _ encoder: LiveValueEncoder, device: DeviceID, characteristic: String, time: Date,
        result: Result<CharacteristicEvent, GATTDecodeError>, bytes: [UInt8], info: WatchHub.DeviceInfo?
    ) -> (encoded: String, record: String) {
        let encoded = encoder.encode(device: device, characteristic: characteristic, receivedAt: time, result: result, bytes: bytes, info: info)
        let record = LiveValueRecord(
            device: device, characteristic: characteristic, receivedAt: time, result: result, bytes: bytes,
            session: info?.session, name: info?.name, adapter: info?.adapter)
        return (String(decoding: encoded, as: UTF8.self), String(decoding: record.jsonBytes(), as: UTF8.self))
    }

    @Test func writesTheRecordsBytesForAnyValueDeviceAndInfo() {
        var random = SeededRandom(seed: 29)
        let encoder = LiveValueEncoder()
        let uuids = CharacteristicRegistry.standard.registeredUUIDs + [BluetoothUUID(0xFFF1)]
        let devices = [
            DeviceID(address: BluetoothAddress("C0:FF:EE:00:00:01")!),
            DeviceID(address: BluetoothAddress("C0:FF:EE:00:00:02")!, addressType: .random),
        ]
        for round in 0..<6000 {
            let uuid = uuids[round % uuids.count]
            let bytes = (0..<Int.random(in: 0...24, using: &random)).map { _ in UInt8.random(in: 0...255, using: &random) }
            let device = devices[Int.random(in: 0..<devices.count, using: &random)]
            // The same device's info changes now and then (the heads kept per source, which
            // this entry point does not use, are the next test's).
            let info = Self.infos[Int.random(in: 0..<Self.infos.count, using: &random)]
            let time = Date(timeIntervalSince1970: Double.random(in: 1_700_000_000...1_900_000_000, using: &random))
            let characteristic = round % 7 == 0 ? "not-a-uuid" : uuid.description
            let (encoded, record) = Self.both(
                encoder, device: device, characteristic: characteristic, time: time, result: Self.decode(uuid, bytes), bytes: bytes, info: info)
            #expect(encoded == record, "\(uuid) \(bytes) \(String(describing: info))")
        }
    }

    /// Real values from a pipeline's sources, as the watch writer and MQTT encode them: each
    /// source's head is kept by the source's identity, and must follow what the fleet knows of
    /// its device whether that comes with a version (the watch hub's) or not (MQTT's).
    @Test func keepsEachSourcesHeadOnlyWhileWhatTheFleetKnowsOfItsDeviceHolds() throws {
        var random = SeededRandom(seed: 41)
        let pipeline = ValuePipeline(logger: Logger(label: "encoder-test") { _ in SwiftLogNoOpLogHandler() })
        let collected = Mutex<[ValuePipeline.Value]>([])
        let tap = pipeline.tap { value in collected.withLock { $0.append(value) } }
        let devices = [
            DeviceID(address: try #require(BluetoothAddress("C0:FF:EE:00:00:01"))),
            DeviceID(address: try #require(BluetoothAddress("C0:FF:EE:00:00:02")), addressType: .random),
        ]
        let characteristics = [BluetoothUUID.batteryLevel.description, BluetoothUUID.heartRateMeasurement.description, BluetoothUUID(0xFFF1).description]
        for _ in 0..<3000 {
            let device = devices[Int.random(in: 0..<devices.count, using: &random)]
            let characteristic = characteristics[Int.random(in: 0..<characteristics.count, using: &random)]
            let bytes = (0..<Int.random(in: 1...6, using: &random)).map { _ in UInt8.random(in: 0...255, using: &random) }
            pipeline.source(device: device, characteristic: characteristic).receive(bytes)
        }
        pipeline.untap(tap)
        let values = collected.withLock { $0 }
        #expect(values.count == 3000)

        func expected(_ value: ValuePipeline.Value, _ info: WatchHub.DeviceInfo?) -> String {
            String(decoding: LiveValueRecord(value, session: info?.session, name: info?.name, adapter: info?.adapter).jsonBytes(), as: UTF8.self)
        }
        let hubEncoder = LiveValueEncoder()
        let mqttEncoder = LiveValueEncoder()
        var known: [DeviceID: WatchHub.DeviceInfo] = [:]
        var version: UInt64 = 0
        for value in values {
            // Now and then the fleet learns something of a device (a new version), or a version
            // passes that changed nothing of it.
            if Int.random(in: 0..<10, using: &random) == 0 {
                known[value.device] = Self.infos[Int.random(in: 0..<Self.infos.count, using: &random)]
                version += 1
            } else if Int.random(in: 0..<10, using: &random) == 0 {
                version += 1
            }
            var appended = Array("before".utf8)
            hubEncoder.append(value, devices: known, version: version, to: &appended)
            #expect(String(decoding: appended, as: UTF8.self) == "before" + expected(value, known[value.device]))
            let info = Self.infos[Int.random(in: 0..<Self.infos.count, using: &random)]
            #expect(String(decoding: mqttEncoder.encode(value, info: info), as: UTF8.self) == expected(value, info))
        }
    }

    @Test func writesTheRecordsTimeAcrossDaysYearsAndMicroseconds() {
        let encoder = LiveValueEncoder()
        let device = DeviceID(address: BluetoothAddress("C0:FF:EE:00:00:01")!)
        let result = Self.decode(.batteryLevel, [42])
        var times: [Double] = [0, -0.000001, -1, -86_400, -86_400.5, 86_399.999999, 86_400, 951_782_400, 1_795_548_974.123456, 253_402_300_799.999]
        // Every microsecond around a midnight, and a day's worth of seconds.
        for step in -20...20 { times.append(1_795_564_800 + Double(step) / 1_000_000) }
        for second in stride(from: 0, to: 86_400 * 3, by: 997) { times.append(1_795_500_000 + Double(second) + 0.5) }
        for time in times {
            let (encoded, record) = Self.both(
                encoder, device: device, characteristic: BluetoothUUID.batteryLevel.description, time: Date(timeIntervalSince1970: time),
                result: result, bytes: [42], info: nil)
            #expect(encoded == record, "\(time)")
        }
    }
}
