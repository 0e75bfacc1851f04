import DBus
import FleetControl
import Foundation
import Glibc
import ProcessSupport

/// `fleet-bench watcher`: a watch client of the real wearfleetd (`WatchValues`, values only),
/// reading as fast as it can. After `warmup` seconds it measures for `seconds`: records
/// received, their latency from the simulator's send stamp (CLOCK_MONOTONIC ns, bytes 2–9 of
/// the band's payload, so the `hex` key's characters 4–19) to this process's receive, and the
/// records the daemon reported dropped. Prints one JSON line (`Report`) and exits.
enum WatcherRole {
    struct Report: Codable {
        var count: Int
        var seconds: Double
        var p50Microseconds: Int64
        var p99Microseconds: Int64
        var dropped: Int
    }

    static func run(bus: String, warmup: Double, seconds: Double) throws {
        let socket = try runBlocking {
            let client = try await ControlClient.connect(to: .address(bus))
            return try await client.watch(WatchRequest(states: false))
        }
        guard let fd = socket.descriptor.rawValue else { throw BenchError("no watch socket") }
        var buffer = [UInt8](repeating: 0, count: socket.maximumRecordBytes)
        var latencies: [Int64] = []
        latencies.reserveCapacity(Int(seconds * 10_000))
        var dropped = 0
        let start = MonotonicTime.seconds
        var measuring = false
        var measureStart = 0.0
        while true {
            let now = MonotonicTime.seconds
            if !measuring, now - start >= warmup {
                measuring = true
                measureStart = now
            }
            if measuring, now - measureStart >= seconds { break }
            var pollFD = pollfd(fd: fd, events: Int16(POLLIN), revents: 0)
            guard poll(&pollFD, 1, 100) > 0 else { continue }
            let count = recv(fd, &buffer, buffer.count, 0)
            guard count > 0 else { throw BenchError("the daemon closed the watch") }
            let received = MonotonicTime.nanoseconds
            guard measuring else { continue }
            let record = buffer[..<count]
            if let stamp = sendStamp(record) {
                latencies.append(Int64(received) - Int64(stamp))
            } else if let total = droppedTotal(record) {
                dropped = total
            }
        }
        let elapsed = MonotonicTime.seconds - measureStart
        latencies.sort()
        func percentile(_ p: Double) -> Int64 {
            latencies.isEmpty ? 0 : latencies[min(latencies.count - 1, Int(Double(latencies.count) * p))] / 1000
        }
        let report = Report(count: latencies.count, seconds: elapsed, p50Microseconds: percentile(0.5), p99Microseconds: percentile(0.99), dropped: dropped)
        FileHandle.standardOutput.write(try JSONEncoder().encode(report) + Data("\n".utf8))
    }

    private static let hexKey = Array(#""hex":""#.utf8)
    private static let droppedPrefix = Array(#"{"kind":"dropped","dropped":"#.utf8)

    /// The send stamp in a band value's record: `hex` is the last key; its characters 4–19 are
    /// the stamp's 8 bytes, little-endian.
    static func sendStamp(_ record: ArraySlice<UInt8>) -> UInt64? {
        guard record.count > hexKey.count + 20 else { return nil }
        var index = record.endIndex - hexKey.count
        while index > record.startIndex {
            if record[index..<index + hexKey.count].elementsEqual(hexKey) { break }
            index -= 1
        }
        let digits = index + hexKey.count + 4
        guard index > record.startIndex, digits + 16 <= record.endIndex else { return nil }
        var stamp: UInt64 = 0
        for byte in 0..<8 {
            let high = hexValue(record[digits + byte * 2]), low = hexValue(record[digits + byte * 2 + 1])
            stamp |= UInt64(high << 4 | low) << (8 * UInt64(byte))
        }
        return stamp
    }

    static func droppedTotal(_ record: ArraySlice<UInt8>) -> Int? {
        guard record.starts(with: droppedPrefix) else { return nil }
        let digits = record.dropFirst(droppedPrefix.count).prefix { $0 >= UInt8(ascii: "0") && $0 <= UInt8(ascii: "9") }
        return Int(String(decoding: digits, as: UTF8.self))
    }

    private static func hexValue(_ character: UInt8) -> UInt64 {
        switch character {
        case UInt8(ascii: "0")...UInt8(ascii: "9"): UInt64(character - UInt8(ascii: "0"))
        case UInt8(ascii: "a")...UInt8(ascii: "f"): UInt64(character - UInt8(ascii: "a") + 10)
        default: 0
        }
    }
}
