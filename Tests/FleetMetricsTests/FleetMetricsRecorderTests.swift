import Foundation
import Fleet
import FleetCore
import FleetMetrics
import Testing
import TestSupport

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

    func scrape(_ snapshot: FleetMetricsSnapshot? = nil) throws -> Exposition {
        try Exposition(String(decoding: metrics.exposition(after: snapshot), as: UTF8.self))
    }

    /// A snapshot of the strap alone, as the orchestrator would report it.
    func snapshot(
        state: DeviceState = .ready, adapter: String? = "hci0", name: String? = "chest strap", className: String? = "strap",
        notifications: Int = 0, writes: FleetMetricsSnapshot.DeviceWrites = .init(), adapters: [FleetStatus.Adapter] = [],
        lastValueAt: Date? = nil
    ) -> FleetMetricsSnapshot {
        let device = FleetStatus.Device(
            id: strap, name: name, pinned: true, className: className, state: state, adapter: adapter.map(AdapterID.init), rssi: nil,
            lastValue: nil, sessions: 1, notifications: notifications, decodeErrors: 0, lastValueAt: lastValueAt)
        return FleetMetricsSnapshot(status: FleetStatus(bluetoothdPresent: true, devices: [device], adapters: adapters), writes: [strap: writes])
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
            if family.name.contains("last_value") { continue }  // created at the first value
            #expect(exposition.types[family.name] == family.kind.rawValue, "\(family.name)")
            #expect(exposition.helps[family.name] == family.help)
        }
    }

    @Test func aSleepingDeviceShowsAsleepWithTheTimeOfItsLastMeasurement() throws {
        #expect(try scrape().values("wearfleet_device_last_value_timestamp_seconds").isEmpty, "absent before the first value")
        change(.ready, .asleep)
        let measured = Date(timeIntervalSince1970: 1_795_934_412)
        let exposition = try scrape(snapshot(state: .asleep, notifications: 3, lastValueAt: measured))
        #expect(exposition.value("wearfleet_device_state", labels(["adapter": "hci0", "state": "asleep"])) == 1)
        #expect(exposition.value("wearfleet_device_last_value_timestamp_seconds", labels(["adapter": "hci0"])) == 1_795_934_412)
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

    /// A failure the fleet put down to the adapter or bluetoothd stays in `errors_total` (a
    /// counter never goes down) and is counted in `explained_errors_total`; the last-error
    /// gauge shows the failure before it again.
    @Test func aWithdrawnFailureIsCountedAsExplainedAndTheLastErrorIsTheOneBefore() throws {
        metrics.recorder.lifecycle(strap, .failed(.outOfSlots, error: nil, session: 1), at: clock.now())
        clock.advance(by: .seconds(5))
        metrics.recorder.lifecycle(strap, .failed(.transient, error: nil, session: 2), at: clock.now())
        metrics.recorder.lifecycle(strap, .failureWithdrawn(.transient, cause: .adapterPoweredOff, session: 2), at: clock.now())
        let exposition = try scrape()
        #expect(exposition.value("wearfleet_device_errors_total", labels(["error_class": "transient"])) == 1)
        #expect(exposition.value("wearfleet_device_explained_errors_total", labels(["error_class": "transient"])) == 1)
        #expect(exposition.value("wearfleet_device_explained_errors_total", labels(["error_class": "outOfSlots"])) == nil)
        #expect(exposition.values("wearfleet_device_last_error_timestamp_seconds") == [Self.wallStart])
        #expect(exposition.value("wearfleet_device_last_error_timestamp_seconds", labels(["error_class": "outOfSlots"])) == Self.wallStart)
        #expect(exposition.types["wearfleet_device_explained_errors_total"] == "counter")

        // With nothing before it, the gauge goes away again.
        let fresh = DeviceID(address: BluetoothAddress("AA:BB:CC:00:00:02")!)
        metrics.recorder.deviceAdded(FleetObservedDevice(id: fresh, name: "band", className: "strap", pinned: true))
        metrics.recorder.lifecycle(fresh, .failed(.transient, error: nil, session: 1), at: clock.now())
        metrics.recorder.lifecycle(fresh, .failureWithdrawn(.transient, cause: .bluetoothdGone, session: 1), at: clock.now())
        let after = try scrape()
        #expect(after.values("wearfleet_device_last_error_timestamp_seconds", ["address": "AA:BB:CC:00:00:02"]).isEmpty)
    }

    @Test func movingToAnotherAdapterLeavesNoStaleGaugesAndKeepsCounters() throws {
        metrics.recorder.attemptGranted(strap, adapter: AdapterID("hci0"), at: clock.now())
        change(.idle, .connecting(adapter: AdapterID("hci0")))
        metrics.recorder.lifecycle(strap, .failed(.outOfSlots, error: nil, session: 1), at: clock.now())
        var writes = FleetMetricsSnapshot.DeviceWrites(queueDepths: [.control: 2])
        writes.counters.sentWithResponse = 1
        _ = try scrape(snapshot(state: .connecting(adapter: AdapterID("hci0")), writes: writes))
        metrics.recorder.attemptGranted(strap, adapter: AdapterID("hci1"), at: clock.now())
        change(.backingOff(attempt: 1, deadline: clock.now()), .connecting(adapter: AdapterID("hci1")))
        let exposition = try scrape(snapshot(state: .connecting(adapter: AdapterID("hci1")), adapter: "hci1", writes: writes))
        let stale = exposition.samples.filter { $0.labels["adapter"] == "hci0" || $0.labels["adapter"] == "" }
        #expect(stale.isEmpty, "series left under the old adapter: \(stale.map(\.name))")
        #expect(exposition.value("wearfleet_device_state", labels(["adapter": "hci1", "state": "connecting"])) == 1)
        #expect(exposition.value("wearfleet_device_queue_depth", labels(["adapter": "hci1", "qos": "control"])) == 2)
        #expect(exposition.value("wearfleet_device_last_error_timestamp_seconds", labels(["adapter": "hci1", "error_class": "outOfSlots"])) != nil)
        #expect(exposition.value("wearfleet_device_errors_total", labels(["error_class": "outOfSlots"])) == 1)
        #expect(exposition.value("wearfleet_device_writes_total", labels(["type": "with_response"])) == 1)
        #expect(exposition.value("wearfleet_device_reconnect_attempts_total", identity) == 1)
    }

    @Test func discoveryErrorsAreCountedPerAdapter() throws {
        func adapter(errors: Int) -> FleetStatus.Adapter {
            FleetStatus.Adapter(id: AdapterID("hci0"), powered: true, slots: 5, linksAndAttempts: 0, discovering: false, discoveryErrors: errors)
        }
        #expect(try scrape(snapshot(adapters: [adapter(errors: 0)])).value("wearfleet_adapter_discovery_errors_total", ["adapter": "hci0"]) == 0)
        #expect(try scrape(snapshot(adapters: [adapter(errors: 3)])).value("wearfleet_adapter_discovery_errors_total", ["adapter": "hci0"]) == 3)
        #expect(try scrape(snapshot(adapters: [adapter(errors: 5)])).value("wearfleet_adapter_discovery_errors_total", ["adapter": "hci0"]) == 5)
    }

    @Test func snapshotsFeedFleetAdapterValueAndWriteFigures() throws {
        let adapter = FleetStatus.Adapter(id: AdapterID("hci0"), powered: true, slots: 5, linksAndAttempts: 2, attemptsInFlight: 1, discovering: false)
        var writes = FleetMetricsSnapshot.DeviceWrites(queueDepths: [.normal: 3, .bulk: 7])
        writes.counters.sentWithResponse = 4
        writes.counters.sentWithoutResponse = 9
        var exposition = try scrape(snapshot(notifications: 40, writes: writes, adapters: [adapter]))
        #expect(exposition.value("wearfleet_pinned_ready_devices") == 1)
        #expect(exposition.value("wearfleet_pinned_devices") == 1)
        #expect(exposition.value("wearfleet_bluetoothd_up") == 1)
        #expect(exposition.value("wearfleet_adapter_slots", ["adapter": "hci0"]) == 5)
        #expect(exposition.value("wearfleet_adapter_slots_used", ["adapter": "hci0"]) == 2)
        #expect(exposition.value("wearfleet_adapter_attempts_in_flight", ["adapter": "hci0"]) == 1)
        #expect(exposition.value("wearfleet_adapter_powered", ["adapter": "hci0"]) == 1)
        #expect(exposition.value("wearfleet_device_notifications_total", identity) == 40)
        #expect(exposition.value("wearfleet_device_writes_total", labels(["type": "with_response"])) == 4)
        #expect(exposition.value("wearfleet_device_writes_total", labels(["type": "without_response"])) == 9)
        #expect(exposition.value("wearfleet_device_queue_depth", labels(["adapter": "hci0", "qos": "bulk"])) == 7)
        #expect(exposition.value("wearfleet_device_queue_depth", labels(["adapter": "hci0", "qos": "control"])) == 0)
        #expect(exposition.value("wearfleet_device_state", labels(["adapter": "hci0", "state": "ready"])) == 1, "no event yet: the snapshot's state")

        writes.counters.sentWithoutResponse = 12
        writes.queueDepths = [:]
        exposition = try scrape(snapshot(notifications: 45, writes: writes))
        #expect(exposition.value("wearfleet_device_notifications_total", identity) == 45)
        #expect(exposition.value("wearfleet_device_writes_total", labels(["type": "without_response"])) == 12)
        #expect(exposition.value("wearfleet_device_queue_depth", labels(["adapter": "hci0", "qos": "bulk"])) == 0)
        #expect(exposition.values("wearfleet_adapter_slots").isEmpty, "an adapter that is gone leaves no series")
        // Without a snapshot (the orchestrator did not answer) the last figures stay.
        #expect(try scrape(nil).value("wearfleet_device_notifications_total", identity) == 45)
    }

    @Test func aReloadThatRenamesADeviceMovesItsSeriesToTheNewLabels() throws {
        metrics.recorder.lifecycle(strap, .failed(.transient, error: nil, session: 1), at: clock.now())
        _ = try scrape(snapshot(notifications: 10))
        let exposition = try scrape(snapshot(name: "left strap", className: "heart-rate", notifications: 12))
        #expect(exposition.samples.allSatisfy { $0.labels["name"] != "chest strap" }, "no series under the old name")
        let renamed = ["address": "AA:BB:CC:00:00:01", "name": "left strap", "class": "heart-rate"]
        #expect(exposition.value("wearfleet_device_notifications_total", renamed) == 12, "from the fleet's total")
        #expect(exposition.value("wearfleet_device_state", renamed.merging(["adapter": "hci0", "state": "ready"]) { $1 }) == 1)
    }

    @Test func aRemovedDeviceLeavesNoSeries() throws {
        metrics.recorder.lifecycle(strap, .failed(.transient, error: nil, session: 1), at: clock.now())
        metrics.recorder.deviceRemoved(strap)
        let exposition = try scrape()
        #expect(exposition.samples.allSatisfy { $0.labels["address"] == nil })
    }

    @Test func aSnapshotTakenBeforeADeviceWasRemovedDoesNotBringItsSeriesBack() throws {
        let before = snapshot(notifications: 5)
        metrics.recorder.deviceRemoved(strap)
        #expect(try scrape(before).samples.allSatisfy { $0.labels["address"] == nil }, "the scrape's snapshot still listed it")
        // Added again, it is counted again.
        metrics.recorder.deviceAdded(FleetObservedDevice(id: strap, name: "chest strap", className: "strap", pinned: true))
        #expect(try scrape(snapshot(notifications: 6)).value("wearfleet_device_notifications_total", identity) == 6)
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
