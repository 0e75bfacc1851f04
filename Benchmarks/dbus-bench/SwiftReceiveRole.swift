import DBus
import Synchronization

/// Signal ingest through the Swift library: one batched subscription (`signalBatches`, the API
/// for notification firehoses), every signal decoded into typed values the way a consumer would: the
/// interface as a `String`, the changed properties as a map, `Value` as `[UInt8]`.
/// Ends at the sender's end marker, or after `idleLimit` without a signal.
func runSwiftReceive(address: String) async throws -> RoleReport {
    let connection = try await DBusConnection.connect(to: .address(address), threadName: "bench-recv")
    let batches = try await connection.signalBatches(
        matching: MatchRule(interface: BenchNames.properties, member: "PropertiesChanged"))
    // Subscribed (AddMatch answered): the orchestrator may start the sender now.
    writeLine("ready")

    let progress = Progress()
    let watchdog = Task {
        // Closing the connection finishes the stream, which ends the loop below.
        var seen = -1
        while !Task.isCancelled {
            try? await Task.sleep(for: BenchNames.idleLimit)
            let now = progress.signals.load(ordering: .relaxed)
            if now == seen {
                await connection.close()
                return
            }
            seen = now
        }
    }
    defer { watchdog.cancel() }

    let cpuBefore = processCPUMicroseconds()
    var count: Int64 = 0
    var start = 0.0
    var last = 0.0
    var checksum: UInt32 = 0
    do {
        receiving: for try await batch in batches {
            for message in batch {
                let interface = try message.body.decode(String.self, at: 0)
                if interface == BenchNames.interface { break receiving }  // the end marker
                guard interface == BenchNames.characteristicInterface else { continue }
                let changed = try message.body.decode([String: DBusValue].self, at: 1)
                guard let value = try changed.decodeIfPresent([UInt8].self, forKey: "Value") else { continue }
                for byte in value { checksum &+= UInt32(byte) }
                if count == 0 { start = Clock.now }
                count += 1
            }
            last = Clock.now
            progress.signals.store(Int(count), ordering: .relaxed)
        }
    } catch let error as DBusError where error.name == DBusError.disconnected {
        // The watchdog gave up waiting: report what arrived.
    }
    let report = RoleReport(count: count, seconds: last - start, cpuMicroseconds: processCPUMicroseconds() - cpuBefore)
    await connection.close()
    if checksum == .max { print("") }  // keeps the decoding from being optimised away
    return report
}

/// Signals seen so far, read by the watchdog task.
private final class Progress: Sendable {
    let signals = Atomic<Int>(0)
}
