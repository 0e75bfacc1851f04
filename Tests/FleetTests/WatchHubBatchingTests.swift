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
