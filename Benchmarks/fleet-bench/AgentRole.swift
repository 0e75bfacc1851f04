import BlueZ
import DBus
import Dispatch
import Fleet
import FleetCore
import FleetMetrics
import Foundation
import GATT
import Logging
import ProcessSupport
import Synchronization

/// `fleet-bench agent`: wearfleetd's runtime, wired as `wearfleetd`'s services (`FleetService`) wire it
/// (the configuration loader, the state store and restore, one bus connection, `BlueZClient`,
/// `FleetOrchestrator`, the metrics observer and endpoint; not the control endpoint, the
/// reloader or sd_notify, which do nothing per notification), plus one observer of the decoded values that records the latency from
/// the simulator's send timestamp to the decoded event. wearfleetd has no way to report that
/// latency, which is why the ingest figures come from this process; its CPU time therefore
/// includes the observer's (`ValuePipeline.observe`, inline: a clock read and an append per value).
///
/// Prints `started` after `orchestrator.start()` (where wearfleetd sends READY=1),
/// `ready SECONDS` once every pinned device is ready, one `WindowReport` JSON line per SIGUSR1,
/// and stops on SIGTERM.
enum AgentRole {
    static func run(bus: String, configPath: String, stateDirectory: String) throws {
        HeapPolicy.apply()  // as wearfleetd does
        let settings = try RoleSetup.settings(configPath: configPath)
        let signals = SignalInbox([SIGUSR1, SIGTERM, SIGINT])
        try runBlocking {
            try await Self.serve(settings: settings, bus: bus, stateDirectory: stateDirectory, signals: signals)
        }
    }

    private static func serve(settings: WearfleetConfiguration, bus: String, stateDirectory: String, signals: SignalInbox) async throws {
        let started = MonotonicTime.seconds
        let daemon = try await EmbeddedDaemon.start(settings: settings, bus: bus, stateDirectory: stateDirectory)
        let orchestrator = daemon.orchestrator
        let pinnedIDs = settings.pinned.map(\.id)
        let pinnedSet = Set(pinnedIDs)
        let latencies = LatencyRecorder()
        orchestrator.pipeline.observe { value in
            guard case .success(.raw(let raw)) = value.result, raw.bytes.count >= 10 else { return }
            latencies.record(sentAt: raw.bytes)
        }
        let readiness = Task {
            await waitUntilReady(orchestrator, pinned: pinnedSet)
            writeLine(String(format: "ready %.3f", MonotonicTime.seconds - started))
        }
        writeLine(String(format: "started %.3f", MonotonicTime.seconds - started))

        var window = (cpu: processCPUMicroseconds(), time: MonotonicTime.seconds, count: 0)
        func notifications() -> Int {
            pinnedIDs.reduce(0) { $0 + orchestrator.pipeline.counters(for: $1).notifications }
        }
        window.count = notifications()
        for await signal in signals.stream {
            guard signal == SIGUSR1 else { break }
            let now = (cpu: processCPUMicroseconds(), time: MonotonicTime.seconds, count: notifications())
            let (p50, p99, samples) = latencies.drain()
            let report = WindowReport(
                count: Int64(now.count - window.count), seconds: now.time - window.time, cpuMicroseconds: now.cpu - window.cpu,
                p50Microseconds: p50, p99Microseconds: p99, samples: samples)
            window = now
            if let line = try? JSONEncoder().encode(report) {
                writeLine(String(decoding: line, as: UTF8.self))
            }
        }
        readiness.cancel()
        await daemon.stop()
    }

    /// Returns once every one of `pinned` is ready, from the orchestrator's state changes
    /// (subscribed to before the orchestrator started, so no change is missed).
    static func waitUntilReady(_ orchestrator: FleetOrchestrator, pinned: Set<DeviceID>) async {
        var ready = Set(await orchestrator.status().devices.filter { $0.state == .ready }.map(\.id)).intersection(pinned)
        guard ready.count < pinned.count else { return }
        for await (device, state) in orchestrator.stateChanges {
            if state == .ready { ready.insert(device) } else { ready.remove(device) }
            if pinned.isSubset(of: ready) { return }
        }
    }
}

/// Latencies since the last drain, in microseconds, from payloads whose bytes 2..9 are the
/// simulator's CLOCK_MONOTONIC send time.
final class LatencyRecorder: Sendable {
    private let samples = Mutex<[Int64]>([])

    func record(sentAt payload: [UInt8]) {
        var sent: UInt64 = 0
        for index in stride(from: 9, through: 2, by: -1) { sent = sent << 8 | UInt64(payload[index]) }
        let now = MonotonicTime.nanoseconds
        let micros = now > sent ? Int64((now - sent) / 1000) : 0
        samples.withLock { $0.append(micros) }
    }

    /// p50, p99 and the sample count; starts a new window.
    func drain() -> (Int64, Int64, Int64) {
        let taken = samples.withLock { samples -> [Int64] in
            defer { samples.removeAll(keepingCapacity: true) }
            return samples
        }
        return Percentiles.of(taken)
    }
}

enum Percentiles {
    /// p50, p99 (nearest rank) and the count; zeros when empty.
    static func of(_ values: [Int64]) -> (Int64, Int64, Int64) {
        guard !values.isEmpty else { return (0, 0, 0) }
        let sorted = values.sorted()
        func at(_ p: Double) -> Int64 { sorted[Int((p * Double(sorted.count - 1)).rounded())] }
        return (at(0.5), at(0.99), Int64(sorted.count))
    }
}

/// Signals delivered as a stream (dispatch sources; the signals themselves are ignored).
final class SignalInbox: Sendable {
    let stream: AsyncStream<Int32>
    private let sources: Mutex<[any DispatchSourceSignal]>

    init(_ numbers: [Int32]) {
        let (stream, continuation) = AsyncStream<Int32>.makeStream()
        self.stream = stream
        var sources: [any DispatchSourceSignal] = []
        for number in numbers {
            signal(number, SIG_IGN)
            let source = DispatchSource.makeSignalSource(signal: number, queue: .global())
            source.setEventHandler { continuation.yield(number) }
            source.resume()
            sources.append(source)
        }
        // Kept for the process's life: a released source stops firing.
        self.sources = Mutex(sources)
    }
}
