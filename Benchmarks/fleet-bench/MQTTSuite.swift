import BlueZSimulator
import Foundation
import ProcessSupport

/// Section 5: the fleet on MQTT. 100 motion bands stream 50 Hz (timestamped, 20 bytes) over the
/// fd path into the real `wearfleetd`, which publishes every value to a private mosquitto; a C
/// libmosquitto subscriber (`mqtt-floor sub`) counts them and times each from the simulator's
/// send (CLOCK_MONOTONIC in the payload) to its receipt. Then the same messages (count, size,
/// rate, 100 topics) from a C libmosquitto publisher (`mqtt-floor pub`): the floor of what
/// publishing them costs. Last, the daemon again with MQTT off, same load: what MQTT adds to its
/// CPU per value and to its RSS. All three in each of `rounds` rounds.
struct MQTTSuite {
    let options: Options
    let directory: URL

    static let devices = 100
    static let rateHz = 50.0

    /// The machine is shared: the three measurements (MQTT on, the C floor, MQTT off) are taken
    /// in each of `rounds` rounds, one after another, and the round with the median ratio to the
    /// floor is reported with every round's ratio beside it, so a burst of someone else's work
    /// weighs on one round rather than on one of the three figures.
    static let rounds = 3

    func run() throws -> MQTTBenchResult {
        log("mqtt: \(Self.devices) devices × \(Int(Self.rateHz)) Hz, \(Self.rounds) rounds")
        var timings = SimulatorTimings()
        timings.timeScale = options.timeScale
        let scenario = Scenario(
            seed: 23, timings: timings, adapters: (0..<4).map { AdapterSpec(name: "hci\($0)", slots: 25) },
            devices: [DeviceSpec(kind: .motionBand, count: Self.devices, bonded: true, mtu: 247, notifyHz: 1, payloadSize: 20, timestamps: true)])
        let fleet = try SimulatedFleet(scenario: scenario, simulatorPath: options.simulator, directory: directory, name: "mqtt")
        defer { fleet.stop() }
        let broker = try PrivateBroker()
        var rounds: [MQTTBenchResult] = []
        for round in 0..<Self.rounds {
            log("mqtt: round \(round + 1) of \(Self.rounds)")
            rounds.append(try measureRound(fleet: fleet, broker: broker, round: round))
        }
        var median = rounds.sorted { $0.publishingRatioToFloor < $1.publishingRatioToFloor }[rounds.count / 2]
        median.ratioRounds = rounds.map(\.publishingRatioToFloor)
        return median
    }

    private func measureRound(fleet: SimulatedFleet, broker: PrivateBroker, round: Int) throws -> MQTTBenchResult {
        var result = MQTTBenchResult(devices: Self.devices, rateHz: Self.rateHz, windowSeconds: options.windowSeconds * 2)

        // MQTT on (the fleet connects at a low rate, then streams).
        try fleet.setMotionStream(rateHz: 1, payloadSize: 20)
        let on = try startDaemon(fleet: fleet, mqttURL: broker.url, name: "mqtt-on-\(round)")
        try fleet.setMotionStream(rateHz: Self.rateHz, payloadSize: 20)
        MonotonicTime.sleep(options.settleSeconds)
        let subscriber = try ChildProcess(
            options.mqttFloor, ["sub", "127.0.0.1", "\(broker.port)", "wearfleet/device/+/raw/#", "\(result.windowSeconds)"])
        guard try subscriber.readLine(within: 10) == "ready" else { throw BenchError("mqtt-floor sub did not subscribe") }
        let sentBefore = try fleet.notificationsSent()
        let window = CPUWindow(on.pid)
        let figures = try JSONSerialization.jsonObject(with: Data(try subscriber.readLine(within: result.windowSeconds + 10).utf8)) as? [String: Any]
        let cpu = window.microseconds
        let seconds = window.seconds
        let offered = Double(try fleet.notificationsSent() - sentBefore) / seconds
        guard let figures, let received = figures["messages"] as? Int, received > 0 else { throw BenchError("no values reached the subscriber") }
        result.offeredPerSecond = offered
        result.receivedPerSecond = Double(received) / seconds
        result.averagePayloadBytes = (figures["bytes"] as? Int ?? 0) / received
        result.daemonCPUMicrosecondsPerValue = cpu / Double(received)
        result.latencyP50Microseconds = figures["p50_us"] as? Int ?? -1
        result.latencyP99Microseconds = figures["p99_us"] as? Int ?? -1
        result.rssOnKilobytes = ProcessSample.residentKilobytes(on.pid) ?? 0
        on.stop()

        // The C publisher's floor for the same messages.
        let publisher = try ChildProcess(options.mqttFloor, [
            "pub", "127.0.0.1", "\(broker.port)", "\(Int(result.receivedPerSecond.rounded()))", "\(result.windowSeconds)",
            "\(result.averagePayloadBytes)",
        ])
        let floor = try JSONSerialization.jsonObject(
            with: Data(try publisher.readLine(within: result.windowSeconds + 20).utf8)) as? [String: Any]
        guard let floor, let messages = floor["messages"] as? Int, messages > 0, let floorCPU = floor["cpu_us"] as? Double else {
            throw BenchError("mqtt-floor pub reported nothing")
        }
        result.floorCPUMicrosecondsPerMessage = floorCPU / Double(messages)

        // MQTT off, same load.
        try fleet.setMotionStream(rateHz: 1, payloadSize: 20)
        let off = try startDaemon(fleet: fleet, mqttURL: nil, name: "mqtt-off-\(round)")
        try fleet.setMotionStream(rateHz: Self.rateHz, payloadSize: 20)
        MonotonicTime.sleep(options.settleSeconds)
        let offSent = try fleet.notificationsSent()
        let offWindow = CPUWindow(off.pid)
        MonotonicTime.sleep(result.windowSeconds)
        let values = Double(try fleet.notificationsSent() - offSent)
        result.daemonCPUMicrosecondsPerValueWithoutMQTT = values > 0 ? offWindow.microseconds / values : 0
        result.rssOffKilobytes = ProcessSample.residentKilobytes(off.pid) ?? 0
        off.stop()
        return result
    }

    private func startDaemon(fleet: SimulatedFleet, mqttURL: String?, name: String) throws -> DaemonProcess {
        var configuration = DaemonConfiguration(
            pinned: fleet.addresses.map { ($0, "random") },
            deviceClass: .init(
                name: "band", subscribe: [BenchUUIDs.motionData], requiredServices: [BenchUUIDs.motionService], fileDescriptorPath: true),
            maxConnections: Self.devices, slotsPerAdapter: 25, attemptInterval: options.attemptInterval)
        configuration.metricsPort = 19_480
        if let mqttURL {
            configuration.extra = "[mqtt]\nenabled = true\nurl = \"\(mqttURL)\"\ngateway_id = \"bench\"\nhomeassistant_discovery = false\n"
        }
        let (config, state) = try configuration.write(to: directory, name: name)
        let daemon = try DaemonProcess(
            executable: options.wearfleetd, bus: fleet.bus.address, config: config, stateDirectory: state, directory: directory, name: name)
        _ = try daemon.waitForReady(within: 60)
        _ = try daemon.waitUntilReady(fleet.addresses, within: 120)
        return daemon
    }
}

/// The MQTT section's figures.
struct MQTTBenchResult: Codable {
    var devices: Int
    var rateHz: Double
    var windowSeconds: Double
    var offeredPerSecond = 0.0
    /// Values/s that reached the subscriber.
    var receivedPerSecond = 0.0
    var averagePayloadBytes = 0
    /// The daemon's whole CPU (ingest, decoding, publishing) per value that reached the subscriber.
    var daemonCPUMicrosecondsPerValue = 0.0
    /// The same daemon and load without MQTT, per value received.
    var daemonCPUMicrosecondsPerValueWithoutMQTT = 0.0
    /// A C libmosquitto publisher sending the same messages, per message.
    var floorCPUMicrosecondsPerMessage = 0.0
    var latencyP50Microseconds = 0
    var latencyP99Microseconds = 0
    var rssOnKilobytes = 0
    var rssOffKilobytes = 0
    /// Every round's `publishingRatioToFloor`, in the order measured (this result is the median round).
    var ratioRounds: [Double] = []

    /// What publishing adds per value, over the C floor.
    var publishingRatioToFloor: Double {
        floorCPUMicrosecondsPerMessage > 0
            ? (daemonCPUMicrosecondsPerValue - daemonCPUMicrosecondsPerValueWithoutMQTT) / floorCPUMicrosecondsPerMessage : 0
    }

    var text: String {
        String(
            format: """
                MQTT: %d devices × %.0f Hz, %.0f s window
                  values/s offered %.0f, reaching the subscriber %.0f (%d-byte JSON each)
                  daemon CPU per value: %.1f µs with MQTT, %.1f µs without: MQTT adds %.1f µs; C libmosquitto publisher %.1f µs (%.2f×; rounds %@)
                  latency simulator send → subscriber: p50 %.2f ms, p99 %.2f ms
                  RSS: %d kB with MQTT, %d kB without
                """,
            devices, rateHz, windowSeconds, offeredPerSecond, receivedPerSecond, averagePayloadBytes,
            daemonCPUMicrosecondsPerValue, daemonCPUMicrosecondsPerValueWithoutMQTT,
            daemonCPUMicrosecondsPerValue - daemonCPUMicrosecondsPerValueWithoutMQTT, floorCPUMicrosecondsPerMessage, publishingRatioToFloor,
            ratioRounds.map { String(format: "%.2f×", $0) }.joined(separator: " "),
            Double(latencyP50Microseconds) / 1000, Double(latencyP99Microseconds) / 1000, rssOnKilobytes, rssOffKilobytes)
    }
}
