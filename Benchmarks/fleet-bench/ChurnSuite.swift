import BlueZSimulator
import Foundation

/// Section 8: wearables walking past the gateway. The real `wearfleetd` keeps two bonded,
/// pinned straps on one adapter with the pool on (room to spare, so it discovers all along);
/// bluez-sim then streams `--churn-devices` distinct passers-by (random static addresses)
/// through discovery over `--churn-seconds`, each advertising for 20 s and then gone for good,
/// its object expiring after stock BlueZ's 30 s TemporaryTimeout. Their names put them outside
/// the pool's `name_prefixes`, so none is connected: bluetoothd keeps a device it connected, and
/// what it keeps the daemon rightly mirrors; what is measured is what passing through discovery
/// leaves behind. The daemon's RSS is read before the first arrival (the fleet at rest), every
/// 10 s during the stream, and once every passer-by's object has expired and the daemon is at
/// rest again: the end must be within 2 MB of the start.
struct ChurnSuite {
    let options: Options
    let directory: URL

    /// Simulated (here: real) seconds before the first passer-by: the daemon starts, connects
    /// the two straps and comes to rest first.
    static let startAfter = 45.0
    static let dwell = 20.0
    static let allowedGrowthKilobytes = 2048

    func run() throws -> ChurnResult {
        let count = options.churnDevices
        let seconds = options.churnSeconds
        log("churn: \(count) passers-by over \(Int(seconds)) s")
        // Stock timings (time scale 1): TemporaryTimeout 30 s, as Debian's bluetoothd.
        let scenario = Scenario(
            seed: 29, timings: SimulatorTimings(), adapters: [AdapterSpec(name: "hci0", slots: 5)],
            devices: [DeviceSpec(kind: .heartRateStrap, count: 2, bonded: true)],
            passersBy: PassersBy(
                count: count, perSecond: Double(count) / seconds, dwell: Self.dwell, kind: .heartRateStrap, startAfter: Self.startAfter))
        let fleet = try SimulatedFleet(scenario: scenario, simulatorPath: options.simulator, directory: directory, name: "churn")
        defer { fleet.stop() }
        // bluez-sim's clock for the first arrival started just before it said "ready".
        let firstArrival = MonotonicTime.seconds + Self.startAfter
        let pinned = fleet.addresses
        var configuration = DaemonConfiguration(
            pinned: pinned.map { ($0, "public") },
            deviceClass: .init(name: "strap", read: [BenchUUIDs.battery], requiredServices: [BenchUUIDs.heartRateService]),
            maxConnections: 5, slotsPerAdapter: 5, attemptInterval: options.attemptInterval, poolEnabled: true)
        configuration.poolNamePrefixes = ["HRM-Strap"]
        configuration.metricsPort = 19_480
        let (config, state) = try configuration.write(to: directory, name: "churn")
        let daemon = try DaemonProcess(
            executable: options.wearfleetd, bus: fleet.bus.address, config: config, stateDirectory: state, directory: directory,
            name: "churn")
        defer { daemon.stop() }
        var result = ChurnResult(devices: count, seconds: seconds)
        _ = try daemon.waitForReady(within: 60)
        _ = try daemon.waitUntilReady(pinned, within: 60)
        try daemon.waitForRest(within: Self.startAfter, "churn, before the stream")
        // The start figure is the last one before the first arrival: what the daemon grows to in
        // its first seconds (first saves, first scrapes of its own state) is not churn.
        while MonotonicTime.seconds < firstArrival - 2 { MonotonicTime.sleep(0.5) }
        result.startRSSKilobytes = try rss(daemon)
        guard try fleet.counter("PassersByArrived") == 0 else {
            throw BenchError("the first passer-by came before the start figure was read")
        }
        let cpu = CPUWindow(daemon.pid)

        // The stream, sampled every 10 s until the last passer-by has gone.
        let deadline = MonotonicTime.seconds + Self.startAfter + seconds + Self.dwell + 120
        while try fleet.counter("PassersByGone") < UInt64(count) {
            guard MonotonicTime.seconds < deadline else {
                throw BenchError("\(try fleet.counter("PassersByGone")) of \(count) passers-by gone by the deadline")
            }
            MonotonicTime.sleep(10)
            let sample = try rss(daemon)
            result.samples.append(ChurnResult.Sample(
                seconds: MonotonicTime.seconds - daemon.startedAt, rssKilobytes: sample,
                arrived: Int(try fleet.counter("PassersByArrived")), gone: Int(try fleet.counter("PassersByGone"))))
            result.peakRSSKilobytes = max(result.peakRSSKilobytes, sample)
        }
        result.streamCPUPercent = cpu.microseconds / (cpu.seconds * 1e6) * 100
        result.streamSeconds = cpu.seconds
        try daemon.waitForRest(within: 120, "churn, after the stream")
        // The daemon hands its free heap back 10 s after its last inputs: read after that.
        MonotonicTime.sleep(12)
        result.endRSSKilobytes = try rss(daemon)
        daemon.log.poll()
        result.pinnedStillReady = daemon.log.readyCount(of: pinned) == pinned.count
        return result
    }

    private func rss(_ daemon: DaemonProcess) throws -> Int {
        guard let kilobytes = ProcessSample.residentKilobytes(daemon.pid) else { throw BenchError("wearfleetd is gone") }
        return kilobytes
    }

}
