@testable import Fleet
import FleetCore
import FleetMetrics
import Testing

/// The recorder turns fleet events into series; each test feeds events and reads the exposition.
@Suite("Recording fleet events as metrics")
struct FleetMetricsRecorderTests {
    static let wallStart = 1_700_000_000.0
    let clock = ManualClock(start: MonotonicInstant(nanoseconds: 1_000_000_000_000))
    let metrics: FleetMetrics
    let strap = DeviceID(address: BluetoothAddress("AA:BB:CC:00:00:01")!)
    let identity = ["address": "AA:BB:CC:00:00:01", "name": "chest strap", "class": "strap"]

    init() {
        let clock = self.clock
        let origin = clock.now()
        metrics = FleetMetrics(clock: clock) { Self.wallStart + clock.now().duration(since: origin).secondsDouble }
        metrics.recorder.deviceAdded(FleetObservedDevice(id: strap, name: "chest strap", className: "strap", pinned: true))
    }

    func scrape(_ status: FleetStatus? = nil) throws -> Exposition {
        try Exposition(String(decoding: metrics.exposition(after: status), as: UTF8.self))
    }

    func change(_ from: DeviceState, _ to: DeviceState) {
        metrics.recorder.lifecycle(strap, .stateChanged(from: from, to: to, session: 1, cause: nil), at: clock.now())
    }

    func labels(_ extra: [String: String] = [:]) -> [String: String] { identity.merging(extra) { $1 } }

    @Test func aNewDeviceIsIdleOnNoAdapterWithEveryCounterAtZero() throws {
        let exposition = try scrape()
        #expect(exposition.value("wearfleet_device_state", labels(["adapter": "", "state": "idle"])) == 1)
        #expect(exposition.values("wearfleet_device_state", labels(["adapter": ""])).reduce(0, +) == 1)
        #expect(exposition.value("wearfleet_device_notifications_total", identity) == 0)
        #expect(exposition.value("wearfleet_device_writes_total", labels(["type": "with_response"])) == 0)
        #expect(exposition.value("wearfleet_device_queue_depth", labels(["adapter": "", "qos": "bulk"])) == 0)
        #expect(exposition.values("wearfleet_device_last_error_timestamp_seconds").isEmpty)
        for family in FleetMetricCatalogue.all where family.labels.contains("address") && family.kind != .histogram {
            if family.name.contains("last_error") || family.name.contains("errors_total") { continue }  // created at the first failure
            #expect(exposition.types[family.name] == family.kind.rawValue, "\(family.name)")
            #expect(exposition.helps[family.name] == family.help)
        }
    }

    @Test func readyLatencyRunsFromTheAttemptToReady() throws {
        change(.idle, .connecting(adapter: nil))
        clock.advance(by: .seconds(3))  // waiting for the gate is not part of it
        metrics.recorder.attemptGranted(strap, adapter: AdapterID("hci0"), at: clock.now())
        change(.connecting(adapter: nil), .connecting(adapter: AdapterID("hci0")))
        clock.advance(by: .milliseconds(700))
        change(.connecting(adapter: AdapterID("hci0")), .discovering)
        clock.advance(by: .milliseconds(800))
        change(.discovering, .ready)
        clock.advance(by: .seconds(10))
        let exposition = try scrape()
        #expect(exposition.value("wearfleet_device_ready_latency_seconds_count", identity) == 1)
        #expect(exposition.value("wearfleet_device_ready_latency_seconds_sum", identity) == 1.5)
        #expect(exposition.value("wearfleet_device_ready_latency_seconds_bucket", labels(["le": "1.0"])) == 0)
        #expect(exposition.value("wearfleet_device_ready_latency_seconds_bucket", labels(["le": "2.5"])) == 1)
        #expect(exposition.value("wearfleet_device_state", labels(["adapter": "hci0", "state": "ready"])) == 1)
        #expect(exposition.value("wearfleet_device_connected_seconds", labels(["adapter": "hci0"])) == 10.8)
        #expect(exposition.value("wearfleet_device_reconnect_attempts_total", identity) == 0)
    }

    @Test func anAttemptThatFailsRecordsNoLatencyButAnErrorAndABackoffDeadline() throws {
        metrics.recorder.attemptGranted(strap, adapter: AdapterID("hci0"), at: clock.now())
        change(.connecting(adapter: nil), .connecting(adapter: AdapterID("hci0")))
        clock.advance(by: .seconds(2))
        let failure = DeviceEffect.LifecycleEvent.Failure(name: "org.bluez.Error.Failed", message: "le-connection-abort-by-remote")
        metrics.recorder.lifecycle(strap, .failed(.transient, error: failure, session: 1), at: clock.now())
        let deadline = clock.now() + .seconds(8)
        change(.connecting(adapter: AdapterID("hci0")), .backingOff(attempt: 1, deadline: deadline))
        metrics.recorder.attemptGranted(strap, adapter: AdapterID("hci0"), at: clock.now())
        change(.backingOff(attempt: 1, deadline: deadline), .connecting(adapter: AdapterID("hci0")))
        let exposition = try scrape()
        let now = Self.wallStart + 2
        #expect(exposition.value("wearfleet_device_ready_latency_seconds_count", identity) == 0)
        #expect(exposition.value("wearfleet_device_errors_total", labels(["error_class": "transient"])) == 1)
        #expect(exposition.value("wearfleet_device_last_error_timestamp_seconds", labels(["adapter": "hci0", "error_class": "transient"])) == now)
        #expect(exposition.value("wearfleet_device_reconnect_attempts_total", identity) == 1)
        #expect(exposition.value("wearfleet_device_backoff_deadline_timestamp_seconds", labels(["adapter": "hci0"])) == 0, "no longer backing off")

        change(.connecting(adapter: AdapterID("hci0")), .backingOff(attempt: 2, deadline: clock.now() + .seconds(8)))
        #expect(try scrape().value("wearfleet_device_backoff_deadline_timestamp_seconds", labels(["adapter": "hci0"])) == now + 8)
    }

    @Test func onlyTheLastErrorClassIsShown() throws {
        metrics.recorder.lifecycle(strap, .failed(.transient, error: nil, session: 1), at: clock.now())
        clock.advance(by: .seconds(1))
        metrics.recorder.lifecycle(strap, .failed(.outOfSlots, error: nil, session: 2), at: clock.now())
        metrics.recorder.lifecycle(strap, .failed(.transient, error: nil, session: 3), at: clock.now())
        clock.advance(by: .seconds(1))
        metrics.recorder.lifecycle(strap, .failed(.transient, error: nil, session: 4), at: clock.now())
        let exposition = try scrape()
        #expect(exposition.values("wearfleet_device_last_error_timestamp_seconds") == [Self.wallStart + 2])
        #expect(exposition.value("wearfleet_device_last_error_timestamp_seconds", labels(["error_class": "transient"])) == Self.wallStart + 2)
        #expect(exposition.value("wearfleet_device_errors_total", labels(["error_class": "transient"])) == 3)
        #expect(exposition.value("wearfleet_device_errors_total", labels(["error_class": "outOfSlots"])) == 1)
    }

    @Test func movingToAnotherAdapterLeavesNoStaleGaugesAndKeepsCounters() throws {
        metrics.recorder.attemptGranted(strap, adapter: AdapterID("hci0"), at: clock.now())
        change(.idle, .connecting(adapter: AdapterID("hci0")))
        metrics.recorder.lifecycle(strap, .failed(.outOfSlots, error: nil, session: 1), at: clock.now())
        metrics.recorder.queueDepth(strap, qos: .control, depth: 2)
        metrics.recorder.writeSent(strap, type: .withResponse)
        _ = try scrape()
        metrics.recorder.attemptGranted(strap, adapter: AdapterID("hci1"), at: clock.now())
        change(.backingOff(attempt: 1, deadline: clock.now()), .connecting(adapter: AdapterID("hci1")))
        let exposition = try scrape()
        let stale = exposition.samples.filter { $0.labels["adapter"] == "hci0" || $0.labels["adapter"] == "" }
        #expect(stale.isEmpty, "series left under the old adapter: \(stale.map(\.name))")
        #expect(exposition.value("wearfleet_device_state", labels(["adapter": "hci1", "state": "connecting"])) == 1)
        #expect(exposition.value("wearfleet_device_queue_depth", labels(["adapter": "hci1", "qos": "control"])) == 2)
        #expect(exposition.value("wearfleet_device_last_error_timestamp_seconds", labels(["adapter": "hci1", "error_class": "outOfSlots"])) != nil)
        #expect(exposition.value("wearfleet_device_errors_total", labels(["error_class": "outOfSlots"])) == 1)
        #expect(exposition.value("wearfleet_device_writes_total", labels(["type": "with_response"])) == 1)
        #expect(exposition.value("wearfleet_device_reconnect_attempts_total", identity) == 1)
    }

    @Test func snapshotsFeedFleetAdapterAndValueFigures() throws {
        var device = FleetStatus.Device(
            id: strap, name: "chest strap", pinned: true, className: "strap", state: .ready, adapter: AdapterID("hci0"), rssi: -60,
            lastValue: nil, sessions: 1, notifications: 40, decodeErrors: 2)
        let adapter = FleetStatus.Adapter(id: AdapterID("hci0"), powered: true, slots: 5, linksAndAttempts: 2, attemptsInFlight: 1, discovering: false)
        var exposition = try scrape(FleetStatus(bluetoothdPresent: true, devices: [device], adapters: [adapter]))
        #expect(exposition.value("wearfleet_pinned_ready_devices") == 1)
        #expect(exposition.value("wearfleet_pinned_devices") == 1)
        #expect(exposition.value("wearfleet_bluetoothd_up") == 1)
        #expect(exposition.value("wearfleet_adapter_slots", ["adapter": "hci0"]) == 5)
        #expect(exposition.value("wearfleet_adapter_slots_used", ["adapter": "hci0"]) == 2)
        #expect(exposition.value("wearfleet_adapter_attempts_in_flight", ["adapter": "hci0"]) == 1)
        #expect(exposition.value("wearfleet_adapter_powered", ["adapter": "hci0"]) == 1)
        #expect(exposition.value("wearfleet_device_notifications_total", identity) == 40)
        #expect(exposition.value("wearfleet_device_decode_errors_total", identity) == 2)
        #expect(exposition.value("wearfleet_device_state", labels(["adapter": "hci0", "state": "ready"])) == 1, "no event yet: the snapshot's state")

        device.notifications = 45
        exposition = try scrape(FleetStatus(bluetoothdPresent: false, devices: [device], adapters: []))
        #expect(exposition.value("wearfleet_device_notifications_total", identity) == 45)
        #expect(exposition.value("wearfleet_bluetoothd_up") == 0)
        #expect(exposition.values("wearfleet_adapter_slots").isEmpty, "an adapter that is gone leaves no series")
        // Without a status (the orchestrator did not answer) the last figures stay.
        #expect(try scrape(nil).value("wearfleet_device_notifications_total", identity) == 45)
    }

    @Test func aRemovedDeviceLeavesNoSeries() throws {
        metrics.recorder.lifecycle(strap, .failed(.transient, error: nil, session: 1), at: clock.now())
        metrics.recorder.deviceRemoved(strap)
        let exposition = try scrape()
        #expect(exposition.samples.allSatisfy { $0.labels["address"] == nil })
    }

    @Test func labelValuesAreEscaped() throws {
        let odd = DeviceID(address: BluetoothAddress("AA:BB:CC:00:00:02")!, addressType: .random)
        let name = "Strap \"7\" \\ back\nline"
        metrics.recorder.deviceAdded(FleetObservedDevice(id: odd, name: name, className: nil, pinned: false))
        let text = String(decoding: metrics.exposition(after: nil), as: UTF8.self)
        #expect(text.contains(#"name="Strap \"7\" \\ back\nline""#))
        let exposition = try Exposition(text)
        let state = exposition.value("wearfleet_device_state", ["address": "AA:BB:CC:00:00:02 (random)", "state": "idle"])
        #expect(state == 1)
        #expect(exposition.samples.first { $0.labels["address"] == "AA:BB:CC:00:00:02 (random)" }?.labels["name"] == name)
    }
}
