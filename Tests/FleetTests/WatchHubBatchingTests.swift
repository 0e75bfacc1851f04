import BluetoothVocabulary
import Fleet
import FleetCore
import Glibc
import Logging
import Testing
import TestSupport

/// How the watch writer batches: a value that finds it idle goes at once; while values flow it
/// waits for `batchTarget` of them or the linger. The linger here is ten minutes, longer than any
/// test waits, so a record that arrives did not wait for it.
@Suite("The watch hub's batching")
struct WatchHubBatchingTests {
    static let batteryLevel = "00002a19-0000-1000-8000-00805f9b34fb"

    @Test func aValueThatFindsTheWriterIdleAfterAClientJoinedGoesAtOnce() async throws {
        let pipeline = ValuePipeline(logger: Logger(label: "watch-hub-test") { _ in SwiftLogNoOpLogHandler() })
        let hub = try WatchHub(pipeline: pipeline, linger: .seconds(600), batchTarget: 8)
        defer { hub.stop() }
        let socket = try hub.addClient(WatchFilter(states: false)).socket
        defer { close(socket) }
        let device = DeviceID(address: try #require(BluetoothAddress("C0:FF:EE:00:00:01")))

        // A client joining is no value: the writer is idle after it, and the first value goes at once.
        pipeline.ingest(device: device, characteristic: Self.batteryLevel, bytes: [1])
        #expect(try await Self.hexOfNextRecord(socket) == "01")
    }

    /// A client that reads nothing while values come, then everything: unfiltered (every value
    /// its own), or filtered to one of two interleaved characteristics (the values it takes are
    /// every other one of the batch).
    @Test(arguments: [false, true])
    func aClientThatFallsBehindGetsItsValuesInOrderAndIsToldOfEveryOneItLost(filtered: Bool) async throws {
        let pipeline = ValuePipeline(logger: Logger(label: "watch-hub-test") { _ in SwiftLogNoOpLogHandler() })
        let hub = try WatchHub(pipeline: pipeline)
        defer { hub.stop() }
        // The smallest queue: its socket and 16 records hold a small part of the values.
        let filter = WatchFilter(characteristics: filtered ? [Self.rawCharacteristic] : nil, states: false, buffer: 16)
        let socket = try hub.addClient(filter).socket
        defer { close(socket) }
        // More values than the socket can hold however its buffer is tuned (a datagram takes at
        // least 64 bytes of it).
        var sendBuffer: Int32 = 0
        var length = socklen_t(MemoryLayout<Int32>.size)
        #expect(getsockopt(socket, SOL_SOCKET, SO_SNDBUF, &sendBuffer, &length) == 0)
        let total = min(60_000, 3000 + Int(sendBuffer) / 64)
        let device = DeviceID(address: try #require(BluetoothAddress("C0:FF:EE:00:00:02")))
        let taken = pipeline.source(device: device, characteristic: Self.rawCharacteristic)
        let other = pipeline.source(device: device, characteristic: Self.otherCharacteristic)
        // Not read while they come: the first go straight to the socket until it is full, the
        // rest through the client's queue, whose oldest are dropped.
        for counter in 0..<total {
            taken.receive([UInt8(counter & 0xFF), UInt8(counter >> 8)])
            if filtered { other.receive([0xFF, 0xFF]) }
        }

        let (values, reportedDropped) = try await withTimeout(.seconds(20), "the last value") {
            var values: [Int] = []
            var reportedDropped = 0
            var reportedSinceLastValue = false
            var buffer = [UInt8](repeating: 0, count: WatchHub.maximumRecordBytes)
            while values.last != total - 1 {
                var pollFD = pollfd(fd: socket, events: Int16(POLLIN), revents: 0)
                guard poll(&pollFD, 1, 20) > 0 else {
                    try Task.checkCancellation()
                    continue
                }
                let count = recv(socket, &buffer, buffer.count, 0)
                guard count > 0 else { throw WatchSocketClosed() }
                let record = String(decoding: buffer[..<count], as: UTF8.self)
                if let dropped = Self.number(after: #""kind":"dropped","dropped":"#, in: record) {
                    // Cumulative, and only after a loss.
                    #expect(dropped > reportedDropped)
                    reportedDropped = dropped
                    reportedSinceLastValue = true
                } else if let hex = Self.text(after: #""hex":""#, in: record), let bytes = UInt16(hex, radix: 16) {
                    #expect(bytes != 0xFFFF, "a value of a characteristic the filter leaves out")
                    let value = Int(bytes >> 8) | Int(bytes & 0xFF) << 8
                    // After a gap, the client was told before it got the value.
                    if let last = values.last, value != last + 1 { #expect(reportedSinceLastValue, "\(last) → \(value) untold") }
                    values.append(value)
                    reportedSinceLastValue = false
                }
            }
            return (values, reportedDropped)
        }
        #expect(values == values.sorted() && Set(values).count == values.count, "in order, none twice")
        #expect(reportedDropped > 0 && values.count + reportedDropped == total, "every value was sent or counted: \(values.count) + \(reportedDropped)")
    }

    static let rawCharacteristic = "0000fff1-0000-1000-8000-00805f9b34fb"
    static let otherCharacteristic = "0000fff2-0000-1000-8000-00805f9b34fb"

    static func text(after key: String, in record: String) -> String? {
        guard let range = record.range(of: key) else { return nil }
        return String(record[range.upperBound...].prefix { $0 != "\"" })
    }

    static func number(after key: String, in record: String) -> Int? {
        guard let range = record.range(of: key) else { return nil }
        return Int(record[range.upperBound...].prefix { $0.isNumber })
    }

    /// The `hex` of the next record on `socket`, waiting at most 5 s for it.
    static func hexOfNextRecord(_ socket: Int32) async throws -> String {
        try await withTimeout(.seconds(5), "a watch record") {
            var buffer = [UInt8](repeating: 0, count: WatchHub.maximumRecordBytes)
            while true {
                var pollFD = pollfd(fd: socket, events: Int16(POLLIN), revents: 0)
                // Short polls, so the timeout's cancellation is seen between them.
                guard poll(&pollFD, 1, 20) > 0 else {
                    try Task.checkCancellation()
                    await Task.yield()
                    continue
                }
                let count = recv(socket, &buffer, buffer.count, 0)
                guard count > 0 else { throw WatchSocketClosed() }
                let record = String(decoding: buffer[..<count], as: UTF8.self)
                guard let range = record.range(of: #""hex":""#) else { continue }
                return String(record[range.upperBound...].prefix { $0 != "\"" })
            }
        }
    }

    struct WatchSocketClosed: Error {}
}
