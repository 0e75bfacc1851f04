import BlueZSimulator
import DBus
import FleetControl
import Foundation
import ProcessSupport

/// Section 5: live values out. 100 motion bands stream 20-byte timestamped notifications at
/// 50 Hz into the real wearfleetd (fd path); cells with 0, 1 and 4 watch clients
/// (`fleet-bench watcher`, each a process of its own reading every record) and with one stalled
/// client (a `WatchValues` socket the benchmark holds and never reads). Per cell: the daemon's
/// CPU per value sent (/proc, over the same window for every cell) and each watcher's receive
/// latency from the simulator's send stamp.
struct WatchSuite {
    let options: Options
    let directory: URL

    static let devices = 100
    static let rateHz = 50.0
    static let cells: [(readers: Int, stalled: Int)] = [(0, 0), (1, 0), (4, 0), (0, 1), (1, 1)]

    func run() throws -> [WatchCell] {
        log("watch: \(Self.devices) bands × \(Int(Self.rateHz)) Hz into wearfleetd, 0/1/4 watchers and a stalled one")
        var timings = SimulatorTimings()
        timings.timeScale = options.timeScale
        let adapters = 4
        let slots = Self.devices / adapters
        let scenario = Scenario(
            seed: 31, timings: timings, adapters: (0..<adapters).map { AdapterSpec(name: "hci\($0)", slots: slots) },
            devices: [DeviceSpec(kind: .motionBand, count: Self.devices, bonded: true, mtu: 247, notifyHz: 1, payloadSize: 20, timestamps: true)])
        let fleet = try SimulatedFleet(scenario: scenario, simulatorPath: options.simulator, directory: directory, name: "watch")
        defer { fleet.stop() }
        var configuration = DaemonConfiguration(
            pinned: fleet.addresses.map { ($0, "random") },
            deviceClass: .init(name: "band", subscribe: [BenchUUIDs.motionData], requiredServices: [BenchUUIDs.motionService], fileDescriptorPath: true),
            maxConnections: Self.devices, slotsPerAdapter: slots, attemptBurst: 4, attemptInterval: options.attemptInterval)
        configuration.metricsPort = 19_490
        let (config, state) = try configuration.write(to: directory, name: "watch")
        let daemon = try DaemonProcess(
            executable: options.wearfleetd, bus: fleet.bus.address, config: config, stateDirectory: state, directory: directory, name: "watch")
        defer { daemon.stop() }
        _ = try daemon.waitForReady(within: 60)
        _ = try daemon.waitUntilReady(fleet.addresses, within: 180)
        try fleet.setMotionStream(rateHz: Self.rateHz, payloadSize: 20)
        MonotonicTime.sleep(options.settleSeconds + 1)

        let warmup = 2.0
        let window = max(options.windowSeconds, 5)
        // The machine is shared: every cell is measured in each of `rounds` rounds, interleaved,
        // and reported by its median round (the daemon's CPU per value), so a burst of someone
        // else's work weighs on one round, not on one cell. What a cell adds is judged within
        // each round, against the no-watcher cell measured a few seconds before it, and reported
        // as the median of those rounds: the baseline itself drifts by a third and more between
        // rounds on this machine, which comparing medians of separate rounds would count as cost.
        var rounds: [[WatchCell]] = []
        for round in 0..<Self.rounds {
            log("watch: round \(round + 1) of \(Self.rounds)")
            rounds.append(try measureCells(fleet: fleet, daemon: daemon, warmup: warmup, window: window))
        }
        let baseIndex = Self.cells.firstIndex { $0.readers == 0 && $0.stalled == 0 }
        return Self.cells.indices.map { index in
            let measured = rounds.map { $0[index] }.sorted { $0.daemonCPUMicrosecondsEach < $1.daemonCPUMicrosecondsEach }
            var median = measured[measured.count / 2]
            median.daemonCPUMicrosecondsEachRounds = rounds.map { $0[index].daemonCPUMicrosecondsEach }
            if let baseIndex {
                median.addedToBaselineRounds = rounds.map { $0[index].daemonCPUMicrosecondsEach / $0[baseIndex].daemonCPUMicrosecondsEach - 1 }
            }
            return median
        }
    }

    static let rounds = 5

    private func measureCells(fleet: SimulatedFleet, daemon: DaemonProcess, warmup: Double, window: Double) throws -> [WatchCell] {
        var cells: [WatchCell] = []
        for (readers, stalled) in Self.cells {
            log("watch: \(readers) watcher(s), \(stalled) stalled")
            let stalledSockets = try (0..<stalled).map { _ in try watchSocket(bus: fleet.bus.address) }
            let watchers = try (0..<readers).map { index in
                try ChildProcess(
                    options.selfExecutable, ["watcher", "--bus", fleet.bus.address, "--warmup", "\(warmup)", "--seconds", "\(window)"],
                    stderrPath: directory.appendingPathComponent("watch-\(readers)-\(stalled)-\(index).log").path)
            }
            defer { for watcher in watchers { watcher.terminate() } }
            MonotonicTime.sleep(warmup + 0.2)
            let cpu = CPUWindow(daemon.pid)
            let sentBefore = try fleet.notificationsSent()
            MonotonicTime.sleep(window - 0.4)
            let daemonMicroseconds = cpu.microseconds
            let seconds = cpu.seconds
            let sent = try fleet.notificationsSent() - sentBefore
            var reports: [WatcherRole.Report] = []
            for watcher in watchers {
                let line = try watcher.readLine(within: window + 30)
                guard let report = try? JSONDecoder().decode(WatcherRole.Report.self, from: Data(line.utf8)) else {
                    throw BenchError("watcher printed an unreadable report: \(line)")
                }
                reports.append(report)
            }
            for socket in stalledSockets { socket.close() }
            cells.append(WatchCell(
                devices: Self.devices, rateHz: Self.rateHz, watchers: readers, stalled: stalled,
                sentPerSecond: Double(sent) / seconds,
                daemonCPUMicrosecondsEach: sent > 0 ? daemonMicroseconds / Double(sent) : .nan,
                daemonCPUPercent: daemonMicroseconds / (seconds * 1e6) * 100,
                watcherPerSecond: reports.map { Double($0.count) / $0.seconds },
                watcherP50Microseconds: reports.map(\.p50Microseconds), watcherP99Microseconds: reports.map(\.p99Microseconds),
                watcherDropped: reports.map(\.dropped)))
            // Let the daemon forget the cell's clients before the next window.
            MonotonicTime.sleep(1)
        }
        return cells
    }

    /// A watch the benchmark holds without reading: the stalled client.
    private func watchSocket(bus: String) throws -> WatchSocket {
        try runBlocking {
            let client = try await ControlClient.connect(to: .address(bus))
            return try await client.watch(WatchRequest(states: false))
        }
    }
}

struct WatchCell: Codable {
    var devices: Int
    var rateHz: Double
    var watchers: Int
    var stalled: Int
    var sentPerSecond: Double
    /// wearfleetd's CPU (all threads) per value the simulator sent in the window.
    var daemonCPUMicrosecondsEach: Double
    /// The same figure in every round (the cell reports its median round).
    var daemonCPUMicrosecondsEachRounds: [Double] = []
    /// In every round, this cell's CPU per value over the no-watcher cell's of the same round,
    /// minus one (+0.25: a quarter more).
    var addedToBaselineRounds: [Double] = []

    /// The median of `addedToBaselineRounds`: what this cell adds, judged round by round.
    var addedToBaseline: Double? {
        guard !addedToBaselineRounds.isEmpty else { return nil }
        return addedToBaselineRounds.sorted()[addedToBaselineRounds.count / 2]
    }
    var daemonCPUPercent: Double
    /// Per reading watcher.
    var watcherPerSecond: [Double]
    var watcherP50Microseconds: [Int64]
    var watcherP99Microseconds: [Int64]
    var watcherDropped: [Int]
}
