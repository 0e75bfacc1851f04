import BlueZ
import BlueZSimulator
import DBus
import Fleet
import FleetCore
import Logging
import Testing
import TestSupport

/// The runtime end to end: a real dbus-daemon, the simulated bluetoothd, the BlueZ client and the
/// orchestrator with its device and central actors.
@Suite("The fleet against the simulated bluetoothd")
struct FleetOrchestratorSimulatorTests {
    static let addresses = ["AA:BB:CC:00:00:01", "AA:BB:CC:00:00:02", "AA:BB:CC:00:00:03"]
    static let heartRateService = "0000180d-0000-1000-8000-00805f9b34fb"
    static let heartRate = "00002a37-0000-1000-8000-00805f9b34fb"

    @Test func pinnedStrapsAreConnectedSubscribedAndDecoded() async throws {
        let bus = try PrivateBus()
        let scenario = Scenario(
            seed: 3, adapters: [AdapterSpec(name: "hci0", slots: 5)],
            devices: Self.addresses.map { DeviceSpec(kind: .heartRateStrap, address: $0, addressType: "public", bonded: true) })
        let simulator = try BlueZSimulator(scenario: scenario, bus: .address(bus.address), timings: .fast)
        try await simulator.start()

        var strap = DeviceStateMachine.Configuration()
        strap.requiredServices = [Self.heartRateService]
        strap.subscriptions = [Self.heartRate]
        let pinned = try Self.addresses.map { text in
            FleetRuntimeConfiguration.PinnedDevice(
                id: DeviceID(address: try #require(BluetoothAddress(text))), className: "strap")
        }
        let configuration = FleetRuntimeConfiguration(
            pinned: pinned, classes: ["strap": strap], pool: PoolConfiguration(maxConnections: 8))
        let client = BlueZClient(connection: try await DBusConnection.connect(to: .address(bus.address)))
        let orchestrator = try FleetOrchestrator(
            configuration: configuration, client: client, logger: Logger(label: "fleet-test") { _ in SwiftLogNoOpLogHandler() },
            seed: 9)
        let changes = orchestrator.stateChanges
        // Asked before anything is known, so that the line kept for it must be forgotten below.
        let before = await orchestrator.summary()
        try await orchestrator.start()

        let ready = try await withTimeout(.seconds(30), "every pinned device to be ready") {
            var ready: Set<DeviceID> = []
            for await (device, state) in changes where state == .ready {
                ready.insert(device)
                if ready.count == pinned.count { break }
            }
            return ready
        }
        #expect(ready == Set(pinned.map(\.id)))

        // Heart-rate notifications arrive on the D-Bus path and decode.
        let values = orchestrator.pipeline.values
        let decoded = try await values.first(within: .seconds(10), "a decoded heart rate") { value in
            if case .success(.heartRateMeasurement) = value.result { return true }
            return false
        }
        #expect(Set(pinned.map(\.id)).contains(decoded.device))
        let status = await orchestrator.status()
        #expect(status.pinnedReady == 3)
        #expect(status.adapters.first?.linksAndAttempts == 3)
        #expect(await orchestrator.summary() == status.summary, "the cheap summary says what the full status says")
        #expect(before != status.summary, "the summary kept from before the start was replaced")

        let counters = try await client.connection.call(
            destination: BlueZSimulator.controlName, path: BlueZSimulator.controlPath,
            interface: "org.wearfleet.Simulator1", member: "GetCounters")
        let map = try counters.decode([String: DBusValue].self, at: 0)
        guard case .dictionary(_, _, let entries)? = map["MaxConcurrentAttempts"] else {
            Issue.record("no MaxConcurrentAttempts counter")
            return
        }
        for entry in entries {
            #expect(entry.value == .uint32(1), "at most one connection attempt in flight per adapter")
        }
        await orchestrator.stop()
        await simulator.stop()
    }

    @Test func allPinnedDevicesComeBackAfterBluetoothdRestarts() async throws {
        let bus = try PrivateBus()
        let scenario = Scenario(
            seed: 4, adapters: [AdapterSpec(name: "hci0", slots: 5)],
            devices: Self.addresses.map { DeviceSpec(kind: .heartRateStrap, address: $0, addressType: "public", bonded: true) })
        let simulator = try BlueZSimulator(scenario: scenario, bus: .address(bus.address), timings: .fast)
        try await simulator.start()
        let pinned = try Self.addresses.map { text in
            FleetRuntimeConfiguration.PinnedDevice(id: DeviceID(address: try #require(BluetoothAddress(text))), className: "default")
        }
        let client = BlueZClient(connection: try await DBusConnection.connect(to: .address(bus.address)))
        let orchestrator = try FleetOrchestrator(
            configuration: FleetRuntimeConfiguration(pinned: pinned, pool: PoolConfiguration(maxConnections: 8)),
            client: client, logger: Logger(label: "fleet-test") { _ in SwiftLogNoOpLogHandler() }, seed: 11)
        let changes = orchestrator.stateChanges
        try await orchestrator.start()

        /// Waits until every pinned device has reached `ready` (again), counting from now.
        func allReady(_ what: String) async throws {
            try await withTimeout(.seconds(30), what) {
                var ready: Set<DeviceID> = []
                for await (device, state) in changes {
                    if state == .ready { ready.insert(device) } else { ready.remove(device) }
                    if ready.count == pinned.count { return }
                }
            }
        }
        try await allReady("every pinned device to be ready")

        // bluetoothd drops its name and every object, then returns with a new unique name.
        _ = try await client.connection.call(
            destination: BlueZSimulator.controlName, path: BlueZSimulator.controlPath,
            interface: "org.wearfleet.Simulator1", member: "RestartBluetoothd", [.double(0.2)])
        let lost = try await changes.first(within: .seconds(10), "a device to notice the restart") { $0.1 != .ready }
        #expect(lost.1 != .ready)
        try await allReady("every pinned device to be ready after the restart")
        let status = await orchestrator.status()
        #expect(status.pinnedReady == 3)
        #expect(status.bluetoothdPresent)
        await orchestrator.stop()
        await simulator.stop()
    }
}
