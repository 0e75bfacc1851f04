import BlueZ
import BlueZSimulator
import DBus
import Fleet
import FleetCore
import FleetMetrics
import Logging
import Testing
import TestSupport

/// Metrics end to end: a private dbus-daemon, the simulated bluetoothd, the orchestrator feeding
/// the recorder, and a scrape over HTTP from the endpoint on an ephemeral port.
@Suite("Scraping the metrics of a fleet on the simulated bluetoothd")
struct FleetMetricsSimulatorTests {
    static let addresses = ["AA:BB:CC:00:00:11", "AA:BB:CC:00:00:12", "AA:BB:CC:00:00:13"]
    static let heartRateService = "0000180d-0000-1000-8000-00805f9b34fb"
    static let heartRate = "00002a37-0000-1000-8000-00805f9b34fb"
    static let band = "C4:7A:10:00:42:01"
    static let bandService = "7a1e0001-3c6f-4b8d-9e2a-5d0c8f6b1a40"
    static let bandData = "7a1e0002-3c6f-4b8d-9e2a-5d0c8f6b1a40"
    static let bandControl = "7a1e0003-3c6f-4b8d-9e2a-5d0c8f6b1a40"

    @Test func aScrapeShowsTheReadyFleetItsAdapterAndItsValues() async throws {
        let bus = try PrivateBus()
        let scenario = Scenario(
            seed: 5, adapters: [AdapterSpec(name: "hci0", slots: 5)],
            devices: Self.addresses.map { DeviceSpec(kind: .heartRateStrap, address: $0, addressType: "public", bonded: true) }
                + [DeviceSpec(kind: .motionBand, address: Self.band, addressType: "random", bonded: true, mtu: 247, notifyHz: 20)])
        let simulator = try BlueZSimulator(scenario: scenario, bus: .address(bus.address), timings: .fast)
        try await simulator.start()

        var strap = DeviceStateMachine.Configuration()
        strap.requiredServices = [Self.heartRateService]
        strap.subscriptions = [Self.heartRate]
        var bandClass = DeviceStateMachine.Configuration()
        bandClass.requiredServices = [Self.bandService]
        bandClass.subscriptions = [Self.bandData]
        let bandID = DeviceID(address: try #require(BluetoothAddress(Self.band)), addressType: .random)
        let pinned = try Self.addresses.enumerated().map { index, text in
            FleetRuntimeConfiguration.PinnedDevice(
                id: DeviceID(address: try #require(BluetoothAddress(text))), name: "strap \(index + 1)", className: "strap")
        } + [FleetRuntimeConfiguration.PinnedDevice(id: bandID, name: "band", className: "band")]
        let logger = Logger(label: "metrics-test") { _ in SwiftLogNoOpLogHandler() }
        let client = BlueZClient(connection: try await DBusConnection.connect(to: .address(bus.address)))
        let orchestrator = try FleetOrchestrator(
            configuration: FleetRuntimeConfiguration(
                pinned: pinned, classes: ["strap": strap, "band": bandClass], pool: PoolConfiguration(maxConnections: 8)),
            client: client, logger: logger, seed: 21)
        let metrics = FleetMetrics()
        await orchestrator.addObserver(metrics.recorder)
        // Patient limits: in a full test run the task pool can be busy past the production deadlines.
        let endpoint = try #require(metrics.serve(
            MetricsSettings(host: "127.0.0.1", port: 0), orchestrator: orchestrator, logger: logger,
            limits: MetricsEndpointTests.patient, statusTimeout: .seconds(120)))
        let changes = orchestrator.stateChanges
        try await orchestrator.start()

        try await withTimeout(.seconds(30), "every pinned device to be ready") {
            var ready: Set<DeviceID> = []
            for await (device, state) in changes where state == .ready {
                ready.insert(device)
                if ready.count == pinned.count { break }
            }
        }
        let decoded = try await orchestrator.pipeline.values.first(within: .seconds(10), "a decoded heart rate") { value in
            if case .success(.heartRateMeasurement) = value.result { return true }
            return false
        }
        // Three status requests to the band; wait until the write path has sent them.
        for _ in 0..<3 {
            try await orchestrator.write(bandID, characteristic: Self.bandControl, bytes: [0x03], qos: .control)
        }
        try await withTimeout(.seconds(10), "the band's writes to be sent") {
            while true {
                let counters = await orchestrator.writeStatus(bandID).counters
                if counters.sentWithResponse + counters.sentWithoutResponse >= 3 { return }
                await Task.yield()
            }
        }

        let reply = try await HTTPTestClient.get("/metrics", port: endpoint.port)
        #expect(reply.status == 200)
        #expect(reply.headers["content-type"] == "text/plain; version=0.0.4; charset=utf-8")
        let exposition = try Exposition(reply.body)
        for family in FleetMetricCatalogue.all where exposition.types[family.name] != nil {
            #expect(exposition.types[family.name] == family.kind.rawValue)
            #expect(exposition.helps[family.name] == family.help)
        }
        #expect(exposition.value("wearfleet_pinned_ready_devices") == 4)
        #expect(exposition.value("wearfleet_pinned_devices") == 4)
        #expect(exposition.value("wearfleet_bluetoothd_up") == 1)
        for (index, address) in Self.addresses.enumerated() {
            let labels = ["address": address, "name": "strap \(index + 1)", "class": "strap", "adapter": "hci0"]
            #expect(exposition.value("wearfleet_device_state", labels.merging(["state": "ready"]) { $1 }) == 1, "\(address)")
            #expect(exposition.values("wearfleet_device_state", labels).reduce(0, +) == 1, "one state at a time")
            #expect((exposition.value("wearfleet_device_connected_seconds", labels) ?? -1) >= 0)
        }
        let decodedLabels = ["address": decoded.device.address.description]
        #expect((exposition.value("wearfleet_device_notifications_total", decodedLabels) ?? 0) > 0)
        #expect(exposition.values("wearfleet_device_ready_latency_seconds_count").reduce(0, +) >= 1)
        let bandLabels = ["address": "\(Self.band) (random)", "name": "band", "class": "band"]
        #expect(exposition.values("wearfleet_device_writes_total", bandLabels).reduce(0, +) == 3)
        #expect(exposition.value("wearfleet_device_state", bandLabels.merging(["adapter": "hci0", "state": "ready"]) { $1 }) == 1)
        #expect(exposition.value("wearfleet_adapter_slots_used", ["adapter": "hci0"]) == 4)
        #expect(exposition.value("wearfleet_adapter_slots", ["adapter": "hci0"]) == 5)
        #expect(exposition.value("wearfleet_adapter_attempts_in_flight", ["adapter": "hci0"]) == 0)
        #expect(exposition.value("wearfleet_adapter_powered", ["adapter": "hci0"]) == 1)

        await orchestrator.stop()
        endpoint.stop()
        await simulator.stop()
    }
}
