import Fleet
import FleetCore
import GATT
import Logging
import Synchronization
import Testing
import TestSupport

@Suite("The value pipeline")
struct ValuePipelineTests {
    static let heartRate = "00002a37-0000-1000-8000-00805f9b34fb"

    func pipeline() -> ValuePipeline {
        ValuePipeline(logger: Logger(label: "pipeline-test") { _ in SwiftLogNoOpLogHandler() })
    }

    func device() throws -> DeviceID { DeviceID(address: try #require(BluetoothAddress("C0:FF:EE:00:00:01"))) }

    @Test func countsDecodesAndRendersTheLastValueOnDemand() throws {
        let pipeline = pipeline()
        let id = try device()
        pipeline.ingest(device: id, characteristic: Self.heartRate, bytes: [0x00, 72])
        pipeline.ingest(device: id, characteristic: Self.heartRate, bytes: [0x00, 75])
        pipeline.ingest(device: id, characteristic: Self.heartRate, bytes: [])
        let counters = pipeline.counters(for: id)
        #expect(counters.notifications == 3)
        #expect(counters.decodeErrors == 1)
        #expect(counters.lastSummary?.contains("75") == true)
    }

    @Test func observersSeeEveryValueInline() throws {
        let pipeline = pipeline()
        let seen = Mutex<[Int]>([])
        pipeline.observe { value in
            if case .success(.heartRateMeasurement(let measurement)) = value.result {
                seen.withLock { $0.append(Int(measurement.beatsPerMinute)) }
            }
        }
        let id = try device()
        for bpm: UInt8 in [60, 61, 62] { pipeline.ingest(device: id, characteristic: Self.heartRate, bytes: [0x00, bpm]) }
        // Inline: the values are there when ingest returns.
        #expect(seen.withLock { $0 } == [60, 61, 62])
    }

    @Test func eachValuesStreamGetsTheValuesAfterItWasMadeAndEndsOnFinish() async throws {
        let pipeline = pipeline()
        let id = try device()
        pipeline.ingest(device: id, characteristic: Self.heartRate, bytes: [0x00, 50])
        let first = pipeline.values
        let second = pipeline.values
        pipeline.ingest(device: id, characteristic: Self.heartRate, bytes: [0x00, 51])
        pipeline.finish()
        for stream in [first, second] {
            var received: [UInt16] = []
            for await value in stream {
                if case .success(.heartRateMeasurement(let measurement)) = value.result { received.append(measurement.beatsPerMinute) }
            }
            #expect(received == [51])
        }
        // A stream asked for after the end is already finished.
        var late = 0
        for await _ in pipeline.values { late += 1 }
        #expect(late == 0)
    }

    /// A kept source is the pipeline itself, resolved once: the same object for the same device
    /// and characteristic, counting into the device's one set of counters, and reaching the
    /// observers and streams that came after it was made.
    @Test func aKeptSourceCountsAndPublishesLikeIngest() async throws {
        let pipeline = pipeline()
        let id = try device()
        let other = DeviceID(address: try #require(BluetoothAddress("C0:FF:EE:00:00:02")))
        let heartRate = pipeline.source(device: id, characteristic: Self.heartRate)
        #expect(pipeline.source(device: id, characteristic: Self.heartRate) === heartRate)
        let battery = pipeline.source(device: id, characteristic: "00002a19-0000-1000-8000-00805f9b34fb")
        #expect(battery !== heartRate)
        let unknown = pipeline.source(device: other, characteristic: "not a uuid")

        heartRate.receive([0x00, 70])
        let seen = Mutex<[String]>([])
        pipeline.observe { value in seen.withLock { $0.append("\(value.device.address) \(value.result.map(\.name))") } }
        let stream = pipeline.values
        battery.receive([87])
        heartRate.receive([])
        pipeline.ingest(device: id, characteristic: Self.heartRate, bytes: [0x00, 71])
        unknown.receive([1, 2, 3])
        pipeline.finish()

        let counters = pipeline.counters(for: id)
        #expect(counters.notifications == 4)
        #expect(counters.decodeErrors == 1)
        #expect(counters.lastSummary?.contains("71") == true)
        #expect(pipeline.counters(for: other).notifications == 1)
        if case .raw(let raw)? = pipeline.counters(for: other).lastEvent {
            #expect(raw.bytes == [1, 2, 3])
        } else {
            Issue.record("a characteristic that is no UUID is passed on raw")
        }
        #expect(seen.withLock { $0 }.count == 4, "the observer came after the first value")
        var streamed = 0
        for await _ in stream { streamed += 1 }
        #expect(streamed == 4)
    }
}
