import BlueZSimulator
import Foundation
import ProcessSupport

/// Section 1: notification ingest. N motion bands stream timestamped notifications at a rate and
/// size set through the simulator's control interface (no reconnects between cells).
///
/// For each N, in one simulator run:
/// 1. bleak (with bleak-retry-connector, as a user would write it) discovers, connects and
///    subscribes to every band, one after another: its time to all subscribed.
/// 2. The daemon (`fleet-bench agent`, wearfleetd's wiring) starts on the D-Bus path and adopts
///    the links; the C floor subscribes to the same signals. Every cell up to `bleakLimit`
///    offered notifications/s is measured first with all three receiving the very same signals
///    (bluetoothd broadcasts each notification once to every matching client): the daemon ÷
///    bleak figures. Then bleak leaves (above that rate it cannot keep up, and the bus would
///    queue for it without bound), and every cell is measured with the daemon and the floor
///    alone: the daemon ÷ floor figures. A third busy receiver on two cores changes what the
///    other two cost per notification, and not by the same factor (at 10 × 50 Hz the daemon ÷
///    floor ratio was 1.2× alone and 1.4–1.6× beside bleak), so each ratio comes from a window
///    with just the two receivers it compares plus, for bleak's, the floor.
/// 3. The daemon restarts on the fd path (AcquireNotify), connecting every band itself: its
///    time to all ready; then each cell again (bleak has no fd path), beside the fd path's floor
///    (`fd-floor`: plain epoll + recv on taps of the very sockets the daemon acquired, which the
///    simulator sends each datagram to right before or after the daemon's, by turns): the same
///    datagrams from the same sender in the same window, as on the D-Bus path.
struct IngestSuite {
    let options: Options
    let directory: URL

    func run() throws -> (cells: [IngestCell], setups: [IngestSetup]) {
        var cells: [IngestCell] = []
        var setups: [IngestSetup] = []
        for count in options.ingestDevices {
            let (more, setup) = try run(devices: count)
            cells += more
            setups.append(setup)
        }
        return (cells, setups)
    }

    private func run(devices count: Int) throws -> ([IngestCell], IngestSetup) {
        log("ingest: \(count) devices")
        let adapters = 4
        let slots = max(5, (count + adapters - 1) / adapters)
        var timings = SimulatorTimings()
        timings.timeScale = options.timeScale
        let scenario = Scenario(
            seed: 11, timings: timings, adapters: (0..<adapters).map { AdapterSpec(name: "hci\($0)", slots: slots) },
            devices: [
                DeviceSpec(kind: .motionBand, count: count, bonded: true, mtu: 247, notifyHz: 1, payloadSize: 20, timestamps: true)
            ])
        let fleet = try SimulatedFleet(scenario: scenario, simulatorPath: options.simulator, directory: directory, name: "ingest-\(count)")
        defer { fleet.stop() }
        var setup = IngestSetup(devices: count)
        let plan = options.ingestCells(devices: count)
        var cells: [IngestCell] = []

        // 1. bleak first, while the bands still advertise.
        var bleak: ReportingReceiver?
        if let python = options.python, plan.contains(where: { Double(count) * $0.rate <= options.bleakLimit }) {
            let receiver = ReportingReceiver(
                name: "bleak",
                process: try ChildProcess(
                    python, [options.bleakScript] + zip(fleet.addresses, fleet.adapters).map { "\($0)@\($1)" },
                    environment: ProcessInfo.processInfo.environment.merging(["DBUS_SYSTEM_BUS_ADDRESS": fleet.bus.address]) { $1 },
                    stderrPath: directory.appendingPathComponent("ingest-\(count)-bleak.log").path))
            setup.bleakConnectSeconds = Double(try receiver.expect("connected", within: Double(count) * 10 + 60))
            bleak = receiver
        }
        defer { bleak?.process.terminate() }

        // 2. The daemon on the D-Bus path, next to the floor: beside bleak first, then without it.
        do {
            let agent = try startAgent(fleet: fleet, fdPath: false, name: "ingest-\(count)-dbus")
            defer { agent.process.terminate(grace: 10) }
            setup.wearfleetAdoptSeconds = Double(try agent.expect("ready", within: Double(count) + 60))
            let floor = ReportingReceiver(
                name: "C floor", process: try ChildProcess(options.floor, ["bluez-recv", fleet.bus.address]))
            defer { floor.process.terminate() }
            _ = try floor.expect("ready", within: 10)
            var besideBleak: [IngestCell] = []
            if let receiver = bleak {
                for cell in plan where Double(count) * cell.rate <= options.bleakLimit {
                    besideBleak.append(try measure(
                        fleet: fleet, devices: count, cell: cell, path: "dbus", wearfleet: agent, floor: floor, bleak: receiver))
                }
                log("ingest: bleak leaves")
                receiver.process.terminate()
                bleak = nil
            }
            for cell in plan {
                var measured = try measure(
                    fleet: fleet, devices: count, cell: cell, path: "dbus", wearfleet: agent, floor: floor, bleak: nil)
                if let shared = besideBleak.first(where: { $0.rateHz == cell.rate && $0.payloadBytes == cell.payload }) {
                    measured.bleak = shared.bleak
                    measured.wearfleetBesideBleak = shared.wearfleet
                    measured.floorBesideBleak = shared.floor
                }
                cells.append(measured)
            }
        }
        bleak?.process.terminate()
        bleak = nil

        // 3. The daemon on the fd path: it connects every band itself.
        do {
            try fleet.setMotionStream(rateHz: 1, payloadSize: 20)
            let agent = try startAgent(fleet: fleet, fdPath: true, name: "ingest-\(count)-fd")
            defer { agent.process.terminate(grace: 10) }
            setup.wearfleetReadySeconds = Double(try agent.expect("ready", within: Double(count) + 60))
            // Every band is subscribed now, so every acquired socket gets its tap.
            let floor = ReportingReceiver(name: "fd floor", process: try ChildProcess(options.fdFloor, [fleet.bus.address] + fleet.addresses))
            defer { floor.process.terminate() }
            _ = try floor.expect("ready", within: 10)
            for cell in plan {
                cells.append(try measure(fleet: fleet, devices: count, cell: cell, path: "fd", wearfleet: agent, floor: floor, bleak: nil))
            }
        }
        return (cells, setup)
    }

    /// The measured window of a cell offering `offered` notifications/s: slow cells run longer,
    /// so that their percentiles rest on enough samples.
    private func window(offered: Double) -> Double {
        offered < 100 ? max(options.windowSeconds, 8) : options.windowSeconds
    }

    private func startAgent(fleet: SimulatedFleet, fdPath: Bool, name: String) throws -> ReportingReceiver {
        let configuration = DaemonConfiguration(
            pinned: fleet.addresses.map { ($0, "random") },
            deviceClass: .init(
                name: "band", subscribe: [BenchUUIDs.motionData], requiredServices: [BenchUUIDs.motionService],
                fileDescriptorPath: fdPath),
            maxConnections: fleet.addresses.count, slotsPerAdapter: max(5, (fleet.addresses.count + 3) / 4),
            attemptBurst: 4, attemptInterval: options.attemptInterval)
        let (config, state) = try configuration.write(to: directory, name: name)
        let process = try ChildProcess(
            options.selfExecutable, ["agent", "--bus", fleet.bus.address, "--config", config, "--state-dir", state],
            stderrPath: directory.appendingPathComponent("\(name)-agent.log").path)
        let agent = ReportingReceiver(name: "wearfleet agent", process: process)
        _ = try agent.expect("started", within: 60)
        return agent
    }

    private func measure(
        fleet: SimulatedFleet, devices: Int, cell: Options.IngestCellPlan, path: String, wearfleet: ReportingReceiver,
        floor: ReportingReceiver?, bleak: ReportingReceiver?
    ) throws -> IngestCell {
        let offered = Double(devices) * cell.rate
        log("ingest: \(devices) devices × \(Int(cell.rate)) Hz × \(cell.payload) B, \(path) path\(bleak == nil ? "" : ", beside bleak")")
        try fleet.setMotionStream(rateHz: cell.rate, payloadSize: cell.payload)
        MonotonicTime.sleep(options.settleSeconds)
        let receivers = [wearfleet] + [floor, bleak].compactMap { $0 }
        for receiver in receivers { _ = try receiver.report() }
        let sentBefore = try fleet.notificationsSent()
        let simulatorCPU = CPUWindow(fleet.simulator.pid)
        let busCPU = CPUWindow(fleet.bus.pid)
        MonotonicTime.sleep(window(offered: offered))
        let daemonReport = try wearfleet.report()
        let floorReport = try floor?.report()
        let bleakReport = try bleak?.report()
        let sent = try fleet.notificationsSent() - sentBefore
        let seconds = simulatorCPU.seconds
        return IngestCell(
            devices: devices, rateHz: cell.rate, payloadBytes: cell.payload, path: path,
            offeredPerSecond: offered, sentPerSecond: Double(sent) / seconds,
            wearfleet: ReceiverFigures(daemonReport), floor: floorReport.map(ReceiverFigures.init),
            bleak: bleakReport.map(ReceiverFigures.init),
            simulatorCPUPercent: simulatorCPU.microseconds / (seconds * 1e6) * 100,
            busCPUMicrosecondsEach: sent > 0 ? busCPU.microseconds / Double(sent) : .nan)
    }
}
