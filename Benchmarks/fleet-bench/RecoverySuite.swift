import BlueZSimulator
import FleetCore
import Foundation

/// Section 3: 100 pinned straps over 4 adapters (25 slots each) under the real `wearfleetd`;
/// bluetoothd restarts (every object and link gone, back with a new unique name); how long
/// until every device is ready again, the most connection attempts the simulator saw in flight
/// on one adapter, and the bound FleetCore promises (`PoolPolicy.recoveryBound`).
struct RecoverySuite {
    let options: Options
    let directory: URL

    static let devices = 100
    static let adapters = 4
    static let slots = 25
    /// bluetoothd's absence, in simulated seconds (scaled by the time scale).
    static let downSeconds = 2.0

    func run() throws -> RecoveryResult {
        log("recovery: \(Self.devices) pinned devices over \(Self.adapters) adapters")
        var timings = SimulatorTimings()
        timings.timeScale = options.timeScale
        timings.heartRateInterval = 10
        let scenario = Scenario(
            seed: 23, timings: timings, adapters: (0..<Self.adapters).map { AdapterSpec(name: "hci\($0)", slots: Self.slots) },
            devices: [DeviceSpec(kind: .heartRateStrap, count: Self.devices, bonded: true)])
        let fleet = try SimulatedFleet(scenario: scenario, simulatorPath: options.simulator, directory: directory, name: "recovery")
        defer { fleet.stop() }
        let addresses = fleet.addresses
        let configuration = DaemonConfiguration(
            pinned: addresses.map { ($0, "public") },
            deviceClass: .init(name: "strap", subscribe: [BenchUUIDs.heartRate], requiredServices: [BenchUUIDs.heartRateService]),
            maxConnections: Self.devices, slotsPerAdapter: Self.slots, attemptBurst: 4, attemptInterval: options.attemptInterval)
        let (config, state) = try configuration.write(to: directory, name: "recovery")
        let daemon = try DaemonProcess(
            executable: options.wearfleetd, bus: fleet.bus.address, config: config, stateDirectory: state,
            directory: directory, name: "recovery")
        defer { daemon.stop() }
        var result = RecoveryResult(devices: Self.devices, adapters: Self.adapters, slotsPerAdapter: Self.slots)
        _ = try daemon.waitForReady(within: 60)
        result.coldStartSeconds = try daemon.waitUntilReady(addresses, within: 120) - daemon.startedAt
        result.coldStartMaxAttemptsInFlight = try fleet.counterMap("MaxConcurrentAttempts").values.max() ?? 0
        MonotonicTime.sleep(0.5)

        try fleet.resetCounters()
        daemon.log.poll()
        daemon.log.forgetLeaves()
        let restartAt = MonotonicTime.seconds
        try fleet.restartBluetoothd(downSeconds: Self.downSeconds)
        let everyoneBack = try daemon.log.wait(within: 120, "every device to be ready after the restart") {
            daemon.log.left.count == addresses.count
                && addresses.allSatisfy { daemon.log.states[$0] == "ready" && (daemon.log.readySince[$0] ?? 0) > restartAt }
        }
        let down = Self.downSeconds * options.timeScale
        result.restartToAllReadySeconds = everyoneBack - restartAt
        result.bluetoothdDownSeconds = down
        result.maxAttemptsInFlightPerAdapter = try fleet.counterMap("MaxConcurrentAttempts")
        result.connectAttempts = try fleet.counterMap("ConnectAttempts").values.reduce(0, +)

        // The promise, with this run's parameters: L is what one attempt holds its adapter for
        // (connect latency plus service resolution), r the fast first retry.
        let latency = Duration.seconds((timings.connectLatency + timings.resolveDelay) * options.timeScale)
        let rateLimit = AttemptRateLimit(burst: 4, refillInterval: options.attemptIntervalDuration)
        let bound = PoolPolicy.recoveryBound(
            devices: Self.devices, adapters: Self.adapters, slotsPerAdapter: Self.slots, connectLatency: latency,
            firstRetryDelay: ReconnectPolicy().fastFirstRetryDelay, rateLimit: rateLimit)
        let lower = PoolPolicy.recoveryLowerBound(
            devices: Self.devices, adapters: Self.adapters, connectLatency: latency,
            firstRetryDelay: ReconnectPolicy().fastFirstRetryDelay, rateLimit: rateLimit)
        result.promisedBoundSeconds = bound.map(\.seconds) ?? .nan
        result.lowerBoundSeconds = lower.map(\.seconds) ?? .nan
        result.promisedAttemptsInFlightPerAdapter = 1
        return result
    }
}

extension Duration {
    var seconds: Double {
        let (whole, attoseconds) = components
        return Double(whole) + Double(attoseconds) / 1e18
    }
}
