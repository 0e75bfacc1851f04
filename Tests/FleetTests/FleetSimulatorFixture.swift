import BlueZ
import BlueZSimulator
import DBus
import Fleet
import FleetCore
import Logging
import Testing
import TestSupport

/// A fleet under test: a private dbus-daemon, the simulated bluetoothd on it, and an
/// orchestrator with its own BlueZ connection.
struct FleetSimulatorFixture {
    let bus: PrivateBus
    let simulator: BlueZSimulator
    let client: BlueZClient
    let orchestrator: FleetOrchestrator
    let changes: AsyncStream<(DeviceID, DeviceState)>
    /// What the fleet logged at info and above (the newest 5,000 to 10,000 entries), when the test
    /// gave no logger of its own: a status wait that times out prints the lines of the devices
    /// that were not there yet.
    let log: LogCapture?

    static let heartRateService = "0000180d-0000-1000-8000-00805f9b34fb"
    static let heartRate = "00002a37-0000-1000-8000-00805f9b34fb"
    static let bandService = "7a1e0001-3c6f-4b8d-9e2a-5d0c8f6b1a40"
    static let bandData = "7a1e0002-3c6f-4b8d-9e2a-5d0c8f6b1a40"
    static let bandControl = "7a1e0003-3c6f-4b8d-9e2a-5d0c8f6b1a40"

    static func start(
        _ scenario: Scenario, _ configuration: FleetRuntimeConfiguration, seed: UInt64 = 1, restored: [KnownDevice] = [],
        logger: Logger? = nil, observers: [any FleetObserver] = [],
        timings: SimulatorTimings = .fast, beforeFleet: (@Sendable (BlueZSimulator, PrivateBus) async throws -> Void)? = nil
    ) async throws -> FleetSimulatorFixture {
        let bus = try PrivateBus()
        let simulator = try BlueZSimulator(scenario: scenario, bus: .address(bus.address), timings: timings)
        try await simulator.start()
        // What bluetoothd knows before the daemon starts (another client's discovery, …).
        try await beforeFleet?(simulator, bus)
        let client = BlueZClient(connection: try await DBusConnection.connect(to: .address(bus.address)))
        let log = logger == nil ? LogCapture(keepingNewest: 5000) : nil
        let orchestrator = try FleetOrchestrator(
            configuration: configuration, client: client, logger: logger ?? log?.logger(label: "fleet-test", level: .info) ?? Logger(label: "fleet-test"),
            seed: seed)
        for observer in observers { await orchestrator.addObserver(observer) }
        await orchestrator.restore(restored)
        let changes = orchestrator.stateChanges
        try await orchestrator.start()
        return FleetSimulatorFixture(
            bus: bus, simulator: simulator, client: client, orchestrator: orchestrator, changes: changes, log: log)
    }

    func stop() async {
        await orchestrator.stop()
        await simulator.stop()
        await client.connection.close()
    }

    /// Waits, state change by state change, until the fleet's status satisfies `condition`. The
    /// bound is for a broken build only: the whole suite beside `stress-ng --cpu 2` starved one
    /// of these tests for 39 s before it even waited (a 30 s bound then failed it).
    @discardableResult
    func waitForStatus(
        _ what: String, timeout: Duration = .seconds(120), _ condition: @escaping @Sendable (FleetStatus) -> Bool
    ) async throws -> FleetStatus {
        let (orchestrator, changes, simulator, log) = (self.orchestrator, self.changes, self.simulator, self.log)
        do {
            return try await withTimeout(timeout, what) {
                let now = await orchestrator.status()
                if condition(now) { return now }
                for await _ in changes {
                    let status = await orchestrator.status()
                    if condition(status) { return status }
                }
                throw TimedOut(what: "\(what) (the fleet stopped)", after: timeout)
            }
        } catch let timedOut as TimedOut {
            // What the fleet looked like, so a failure says where it stood.
            let status = await orchestrator.status()
            var devices: [String] = []
            for device in status.devices {
                let address = device.id.address.description
                let fleetSide = "\(address) \(device.state) on \(device.adapter.map(\.name) ?? "-") last failure \(device.lastFailure.map { "\($0)" } ?? "-")"
                devices.append("\(fleetSide) [simulator: \(await simulator.linkSummary(of: address))]")
            }
            let adapters = status.adapters.map { "\($0.id) discovering=\($0.discovering) errors=\($0.discoveryErrors) used=\($0.linksAndAttempts)" }
            var lines: [String] = []
            if let log {
                let waiting = Set(status.devices.filter { $0.state != .ready }.map { $0.id.address.description })
                lines = log.entries.filter { entry in
                    guard case .string(let address)? = entry.metadata["device_address"] else { return false }
                    return waiting.contains(address)
                }.suffix(40).map { "  \($0.level) \($0.message) \($0.metadata.sorted { $0.key < $1.key }.map { "\($0.key)=\($0.value)" }.joined(separator: " "))" }
            }
            let logText = lines.isEmpty ? "" : "; the log of the devices not ready:\n" + lines.joined(separator: "\n")
            throw TimedOut(
                what: "\(timedOut.what); devices:\n  \(devices.joined(separator: "\n  "))\nadapters: \(adapters.joined(separator: ", "))\(logText)",
                after: timeout)
        }
    }

    func state(_ address: String) async -> DeviceState? {
        await orchestrator.status().devices.first { $0.id.address.description == address }?.state
    }

    static func id(_ address: String, random: Bool = false) throws -> DeviceID {
        DeviceID(address: try #require(BluetoothAddress(address)), addressType: random ? .random : .public)
    }

    static func strapClass() -> DeviceStateMachine.Configuration {
        var strap = DeviceStateMachine.Configuration()
        strap.requiredServices = [heartRateService]
        strap.subscriptions = [heartRate]
        return strap
    }

    static func bandClass(fdPath: Bool) -> DeviceStateMachine.Configuration {
        var band = DeviceStateMachine.Configuration()
        band.requiredServices = [bandService]
        band.subscriptions = [bandData]
        band.useFileDescriptorPath = fdPath
        return band
    }
}
