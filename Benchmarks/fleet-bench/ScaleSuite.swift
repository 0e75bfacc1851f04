import BlueZSimulator
import Fleet
import FleetCore
import Foundation

/// Section 2: 10, 100 and 1,000 known devices (bonded in the simulator, so bluetoothd knows them,
/// and listed in the state file). Ten are pinned; the pool is on, so every other one is a pool
/// candidate the daemon tracks, with connections for ten more. Measures the real `wearfleetd`:
/// RSS once the pinned devices are ready, time to READY=1 and to all pinned ready, then idle CPU
/// of all three daemons together over the same window (nothing notifies: the class reads the
/// battery once and subscribes to nothing).
struct ScaleSuite {
    let options: Options
    let directory: URL

    static let pinnedCount = 10

    func run() throws -> [ScaleResult] {
        var running: [(Int, SimulatedFleet, DaemonProcess, ScaleResult)] = []
        defer {
            for (_, fleet, daemon, _) in running {
                daemon.stop()
                fleet.stop()
            }
        }
        for count in options.scaleDevices {
            log("scale: \(count) known devices")
            let fleet = try SimulatedFleet(scenario: scenario(count), simulatorPath: options.simulator, directory: directory, name: "scale-\(count)")
            let pinned = Array(fleet.addresses.prefix(Self.pinnedCount))
            let (config, state) = try configuration(pinned: pinned, metricsPort: 19_470 + running.count)
                .write(to: directory, name: "scale-\(count)")
            try writeStateFile(fleet.addresses, pinned: Set(pinned), to: state)
            let daemon = try DaemonProcess(
                executable: options.wearfleetd, bus: fleet.bus.address, config: config, stateDirectory: state,
                directory: directory, name: "scale-\(count)")
            running.append((count, fleet, daemon, ScaleResult(devices: count, pinned: pinned.count)))
            let ready = try daemon.waitForReady(within: 60)
            let allReady = try daemon.waitUntilReady(pinned, within: 120) - daemon.startedAt
            // The pool fills after the pinned devices, discovering as it goes: the fleet is at
            // rest once the daemon has worked off what that brought (under 2 % CPU in two
            // half-seconds running). A pool with room keeps discovering: that is its steady state.
            try daemon.waitForRest(within: 180, "\(count) devices")
            running[running.count - 1].3.discoveringAtRest = try fleet.anyAdapterDiscovering()
            running[running.count - 1].3.settledSeconds = MonotonicTime.seconds - daemon.startedAt
            MonotonicTime.sleep(1)
            running[running.count - 1].3.readySeconds = ready
            running[running.count - 1].3.allPinnedReadySeconds = allReady
            running[running.count - 1].3.rssKilobytes = ProcessSample.residentKilobytes(daemon.pid) ?? 0
            running[running.count - 1].3.simulatorRSSKilobytes = ProcessSample.residentKilobytes(fleet.simulator.pid) ?? 0
        }
        log("scale: idle CPU of every daemon over \(Int(options.idleSeconds)) s")
        let windows = running.map { CPUWindow($0.2.pid) }
        let simulators = running.map { CPUWindow($0.1.simulator.pid) }
        MonotonicTime.sleep(options.idleSeconds)
        var results: [ScaleResult] = []
        for (index, entry) in running.enumerated() {
            var result = entry.3
            result.idleSeconds = windows[index].seconds
            result.idleCPUPercent = windows[index].microseconds / (windows[index].seconds * 1e6) * 100
            result.simulatorIdleCPUPercent = simulators[index].microseconds / (simulators[index].seconds * 1e6) * 100
            result.stillRunning = ProcessSample.residentKilobytes(entry.2.pid) != nil
            results.append(result)
        }
        if let small = results.first, let large = results.last, large.devices > small.devices {
            let perDevice = Double(large.rssKilobytes - small.rssKilobytes) / Double(large.devices - small.devices)
            for index in results.indices { results[index].rssPerDeviceKilobytes = perDevice }
        }
        return results
    }

    /// Heart-rate straps, bonded, over 4 adapters of 5 slots. Advertisements every second of
    /// real time whatever the time scale: 1,000 devices then send what a real ward would
    /// (~800 RSSI updates a second while discovering), not ten times that.
    private func scenario(_ count: Int) -> Scenario {
        var timings = SimulatorTimings()
        timings.timeScale = options.timeScale
        timings.advertisingInterval = 1 / options.timeScale
        return Scenario(
            seed: 17, timings: timings, adapters: (0..<4).map { AdapterSpec(name: "hci\($0)", slots: 5) },
            devices: [DeviceSpec(kind: .heartRateStrap, count: count, bonded: true)])
    }

    private func configuration(pinned: [String], metricsPort: Int) -> DaemonConfiguration {
        var configuration = DaemonConfiguration(
            pinned: pinned.map { ($0, "public") },
            deviceClass: .init(name: "strap", read: [BenchUUIDs.battery], requiredServices: [BenchUUIDs.heartRateService]),
            maxConnections: 20, slotsPerAdapter: 5, attemptBurst: 4, attemptInterval: options.attemptInterval,
            poolEnabled: true)
        configuration.metricsPort = metricsPort
        return configuration
    }

    private func writeStateFile(_ addresses: [String], pinned: Set<String>, to directory: String) throws {
        var devices: [KnownDevice] = []
        for (index, text) in addresses.enumerated() {
            guard let address = BluetoothAddress(text) else { throw BenchError("bad simulator address \(text)") }
            devices.append(KnownDevice(
                id: DeviceID(address: address), adapter: AdapterID("hci\(index % 4)"), name: "HRM-Strap \(index + 1)",
                servicesSeen: [BlueZUUIDs.heartRateService], membership: pinned.contains(text) ? .pinned : .pool))
        }
        try StateFile.encode(devices).write(to: URL(fileURLWithPath: directory).appendingPathComponent(StateStore.fileName))
    }
}

enum BlueZUUIDs {
    static let heartRateService = "0000180d-0000-1000-8000-00805f9b34fb"
}
