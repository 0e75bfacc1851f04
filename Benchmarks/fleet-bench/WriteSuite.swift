import BlueZSimulator
import Foundation
import ProcessSupport

/// Section 4: writes without response from 10 devices' queues (see `WriterRole` for what drives
/// them and why not wearfleetd itself yet). The simulator counts what it received.
struct WriteSuite {
    let options: Options
    let directory: URL

    static let devices = 10

    func run() throws -> WriteResult {
        log("writes: \(Self.devices) devices, writes without response for \(Int(options.writeSeconds)) s")
        var timings = SimulatorTimings()
        timings.timeScale = options.timeScale
        let scenario = Scenario(
            seed: 29, timings: timings, adapters: [AdapterSpec(name: "hci0", slots: Self.devices)],
            devices: [DeviceSpec(kind: .motionBand, count: Self.devices, bonded: true, mtu: 247)])
        let fleet = try SimulatedFleet(scenario: scenario, simulatorPath: options.simulator, directory: directory, name: "writes")
        defer { fleet.stop() }
        var configuration = DaemonConfiguration(
            pinned: fleet.addresses.map { ($0, "random") },
            deviceClass: .init(name: "band", requiredServices: [BenchUUIDs.motionService], fileDescriptorPath: true),
            maxConnections: Self.devices, slotsPerAdapter: Self.devices, attemptBurst: 4, attemptInterval: options.attemptInterval)
        configuration.metricsPort = 19_480
        let (config, state) = try configuration.write(to: directory, name: "writes")
        try fleet.resetCounters()
        let writer = try ChildProcess(
            options.selfExecutable,
            ["writer", "--bus", fleet.bus.address, "--config", config, "--state-dir", state, "--seconds", "\(options.writeSeconds)"],
            stderrPath: directory.appendingPathComponent("writes-writer.log").path)
        defer { writer.terminate() }
        let line = try writer.readLine(within: options.writeSeconds + 60)
        let report: WriterRole.Report
        do {
            report = try JSONDecoder().decode(WriterRole.Report.self, from: Data(line.utf8))
        } catch {
            throw BenchError("writer printed an unreadable report: \(line)")
        }
        // The simulator's reader threads may still be draining the sockets.
        MonotonicTime.sleep(1)
        let received = try fleet.counter("TotalWritesReceived")
        let writes = report.writesPerDevice.values
        let total = writes.reduce(0, +)
        let minimum = writes.min() ?? 0
        let maximum = writes.max() ?? 0
        return WriteResult(
            devices: Self.devices, seconds: report.seconds,
            driver: "wearfleetd's write path (FleetOrchestrator.write), \(report.onSocket) of them on AcquireWrite sockets",
            writesPerSecond: Double(total) / report.seconds,
            bytesPerSecond: Double(report.bytesPerDevice.values.reduce(0, +)) / report.seconds,
            perDeviceMin: minimum, perDeviceMax: maximum, fairness: maximum > 0 ? Double(minimum) / Double(maximum) : 0,
            queueCapacity: report.queueCapacity, deepestQueue: report.deepestQueue, refusedQueueFull: report.refusedQueueFull,
            receivedBySimulator: received,
            driverCPUMicrosecondsEach: total > 0 ? Double(report.cpuMicroseconds) / Double(total) : .nan)
    }
}
