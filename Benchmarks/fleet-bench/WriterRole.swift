import Fleet
import FleetCore
import Foundation
import Logging
import ProcessSupport
import Synchronization

/// `fleet-bench writer`: writes without response from 10 devices' queues through wearfleetd's
/// own write path (`FleetOrchestrator.write`: per-device bounded queues, FleetCore's scheduler,
/// AcquireWrite sockets on the fd path), in a process of its own.
///
/// Once every device is ready, one producer per device keeps its bulk queue full for `seconds`:
/// it writes until the queue refuses (`queueFull`), then waits a millisecond. Device i writes
/// (20 + 20·i)-byte values (a status command the band answers, so nothing changes its stream).
/// Prints one `Report` JSON line from the daemon's own write counters and exits.
enum WriterRole {
    struct Report: Codable {
        var seconds: Double
        var cpuMicroseconds: Int64
        var writesPerDevice: [String: Int]
        var bytesPerDevice: [String: Int]
        var onSocket: Int
        var queueCapacity: Int
        var deepestQueue: Int
        var refusedQueueFull: Int
    }

    static func run(bus: String, configPath: String, stateDirectory: String, seconds: Double) throws {
        let settings = try RoleSetup.settings(configPath: configPath)
        let report = try runBlocking {
            try await Self.drive(settings: settings, bus: bus, stateDirectory: stateDirectory, seconds: seconds)
        }
        writeLine(String(decoding: try JSONEncoder().encode(report), as: UTF8.self))
    }

    private static func drive(settings: WearfleetConfiguration, bus: String, stateDirectory: String, seconds: Double) async throws -> Report {
        let daemon = try await EmbeddedDaemon.start(settings: settings, bus: bus, stateDirectory: stateDirectory)
        let orchestrator = daemon.orchestrator
        let devices = settings.pinned.map(\.id)
        await AgentRole.waitUntilReady(orchestrator, pinned: Set(devices))
        let capacity = settings.deviceClass(named: settings.pinned.first?.className ?? "").queueDepth[.bulk] ?? 256
        let before = await counters(orchestrator, devices)
        let cpuBefore = processCPUMicroseconds()
        let start = MonotonicTime.seconds
        let end = start + seconds
        let refused = await withTaskGroup(of: Int.self) { group in
            for (index, device) in devices.enumerated() {
                let payload = [UInt8(0x03)] + [UInt8](repeating: UInt8(index), count: 19 + 20 * index)
                group.addTask {
                    var refused = 0
                    while MonotonicTime.seconds < end {
                        do {
                            try await orchestrator.write(
                                device, characteristic: BenchUUIDs.motionControl, bytes: payload, qos: .bulk, mode: .withoutResponse)
                        } catch {
                            refused += 1
                            try? await Task.sleep(for: .milliseconds(1))
                        }
                    }
                    return refused
                }
            }
            return await group.reduce(0, +)
        }
        let elapsed = MonotonicTime.seconds - start
        let cpu = processCPUMicroseconds() - cpuBefore
        let after = await counters(orchestrator, devices)
        await daemon.stop()
        var writes: [String: Int] = [:]
        var bytes: [String: Int] = [:]
        var onSocket = 0
        var deepest = 0
        for (index, device) in devices.enumerated() {
            let sent = (after[device]?.sentWithoutResponse ?? 0) - (before[device]?.sentWithoutResponse ?? 0)
            writes[device.address.description] = sent
            bytes[device.address.description] = sent * (20 + 20 * index)
            onSocket += (after[device]?.sentOnSocket ?? 0) - (before[device]?.sentOnSocket ?? 0)
            deepest = max(deepest, after[device]?.highWater[OutgoingQoS.bulk.description] ?? 0)
        }
        return Report(
            seconds: elapsed, cpuMicroseconds: cpu, writesPerDevice: writes, bytesPerDevice: bytes, onSocket: onSocket,
            queueCapacity: capacity, deepestQueue: deepest, refusedQueueFull: refused)
    }

    private static func counters(_ orchestrator: FleetOrchestrator, _ devices: [DeviceID]) async -> [DeviceID: WriteCounters] {
        var result: [DeviceID: WriteCounters] = [:]
        for device in devices { result[device] = await orchestrator.writeStatus(device).counters }
        return result
    }
}
