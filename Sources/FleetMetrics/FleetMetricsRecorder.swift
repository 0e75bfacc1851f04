import CoreMetrics
import Fleet
import FleetCore
import Glibc
import Synchronization

/// Turns what the fleet does into metric updates. Events (state changes, failures, grants)
/// arrive as a `FleetObserver` on the orchestrator's actor; figures the fleet keeps itself
/// (adapters' slots, pinned ready, value and write counts, queue depths) are refreshed from a
/// `FleetMetricsSnapshot` just before each scrape (`refresh(from:)`). Per-device figures stay
/// plain numbers in the records (`DeviceFigures`) and are rendered at each scrape
/// (`deviceFamilies()`); fleet and adapter gauges live in the exporter's registry.
///
/// Thread-safe: one lock around the per-device records; each observer call is a dictionary
/// look-up and a few additions, so the orchestrator never waits on a scrape for long.
public final class FleetMetricsRecorder: FleetObserver {
    struct DeviceRecord {
        let labels: DeviceLabels
        var figures = DeviceFigures()
        var state: DeviceState = .idle
        /// True once a state change arrived as an event: events are newer than any snapshot.
        var stateFromEvents = false
        /// The adapter of the current link or attempt, else of the last one: the `adapter` label
        /// of the device's gauges ("" before its first attempt).
        var adapter: AdapterID?
        var connectingSince: MonotonicInstant?
        var linkedSince: MonotonicInstant?
        /// The last failure's class and Unix time: one `last_error` series, under that class.
        var lastError: (errorClass: FailureClass, timestamp: Double)?
        /// The failure `lastError` showed before, shown again when the latest is withdrawn.
        var errorBeforeLast: (errorClass: FailureClass, timestamp: Double)?
        var queueDepths: [OutgoingQoS: Int] = [:]
        /// Unix time of the last decoded value, from the fleet's snapshot.
        var lastValueTimestamp: Double?
        /// The fleet's totals at the last refresh: counters advance by what is new since.
        var valuesSeen = 0
        var decodeErrorsSeen = 0
        var writesSeen: [OutgoingWriteType: Int] = [:]
    }

    struct AdapterGauges {
        let slots: Gauge
        let used: Gauge
        let inFlight: Gauge
        let powered: Gauge
        let discoveryErrors: Counter
        /// The central's count at the last refresh: the counter advances by what is new since.
        var discoveryErrorsSeen = 0

        func destroy() {
            for gauge in [slots, used, inFlight, powered] { gauge.destroy() }
            discoveryErrors.destroy()
        }
    }

    struct State {
        var devices: [DeviceID: DeviceRecord] = [:]
        var adapters: [AdapterID: AdapterGauges] = [:]
    }

    let factory: any MetricsFactory
    let clock: any MonotonicClock
    let wallClock: @Sendable () -> Double
    let state = Mutex(State())
    let pinnedReady: Gauge
    let pinnedDevices: Gauge
    let bluetoothdUp: Gauge

    /// - Parameters:
    ///   - factory: where series are created (`PrometheusExporter.factory`).
    ///   - clock: the orchestrator's clock: event instants and "now" must come from one clock.
    ///   - wallClock: Unix time in seconds, for the timestamp gauges.
    public init(
        factory: any MetricsFactory, clock: any MonotonicClock = SystemMonotonicClock(),
        wallClock: @escaping @Sendable () -> Double = FleetMetricsRecorder.unixTime
    ) {
        self.factory = factory
        self.clock = clock
        self.wallClock = wallClock
        pinnedReady = Gauge(label: FleetMetricCatalogue.pinnedReady.name, factory: factory)
        pinnedDevices = Gauge(label: FleetMetricCatalogue.pinnedDevices.name, factory: factory)
        bluetoothdUp = Gauge(label: FleetMetricCatalogue.bluetoothdUp.name, factory: factory)
    }

    /// CLOCK_REALTIME in seconds.
    @Sendable public static func unixTime() -> Double {
        var now = timespec()
        clock_gettime(CLOCK_REALTIME, &now)
        return Double(now.tv_sec) + Double(now.tv_nsec) / 1e9
    }

    // MARK: - FleetObserver

    public func observe(_ event: FleetEvent) {
        switch event {
        case .deviceAdded(let device): deviceAdded(device)
        case .deviceRemoved(let device, _): deviceRemoved(device)
        case .lifecycle(let device, let lifecycle, _, let instant): self.lifecycle(device, lifecycle, at: instant)
        case .attemptGranted(let device, let adapter, let instant): attemptGranted(device, adapter: adapter, at: instant)
        case .deviceUpdated, .evicted, .bluetoothdAppeared, .bluetoothdVanished, .adapterPowerChanged, .discoveryFailed, .runtimePinsChanged, .reloaded, .learned,
            .writeFinished, .readFinished, .linkLossExplained, .addressTypeMismatch:
            break
        }
    }

    public func deviceAdded(_ device: FleetObservedDevice) {
        state.withLock { state in
            guard state.devices[device.id] == nil else { return }
            state.devices[device.id] = DeviceRecord(labels: DeviceLabels(device))
        }
    }

    public func deviceRemoved(_ device: DeviceID) {
        state.withLock { state in _ = state.devices.removeValue(forKey: device) }
    }

    public func lifecycle(_ device: DeviceID, _ event: DeviceEffect.LifecycleEvent, at instant: MonotonicInstant) {
        let timestamp = wallClock()
        state.withLock { state in
            // Taken out and put back, so that its dictionaries are changed in place, not copied.
            guard var record = state.devices.removeValue(forKey: device) else { return }  // not announced: registered too late
            switch event {
            case .stateChanged(let from, let to, _, _):
                record.state = to
                record.stateFromEvents = true
                Self.noteTimings(&record, from: from, to: to, at: instant)
                if case .connecting(let adapter?) = to { record.adapter = adapter }
            case .failed(let failureClass, _, _):
                record.figures.errors[failureClass, default: 0] += 1
                record.errorBeforeLast = record.lastError
                record.lastError = (failureClass, timestamp)
            case .failureWithdrawn(let failureClass, _, _):
                // `errors` keeps it (a counter never goes down); this says it was not the device's.
                record.figures.explainedErrors[failureClass, default: 0] += 1
                // Only the latest failure is ever withdrawn, so the one before is the last again.
                record.lastError = record.errorBeforeLast
                record.errorBeforeLast = nil
            case .setupProblem:
                break  // logged by the orchestrator; the device stays linked
            }
            state.devices[device] = record
        }
    }

    public func attemptGranted(_ device: DeviceID, adapter: AdapterID, at instant: MonotonicInstant) {
        state.withLock { state in
            state.devices[device]?.figures.attemptsGranted += 1
            state.devices[device]?.adapter = adapter
        }
    }

    // MARK: - Records

    /// The per-device families as they stand (call `refresh` first), devices in address order,
    /// time-dependent gauges as of now.
    func deviceFamilies() -> [RenderedFamily] {
        let (now, wallNow) = (clock.now(), wallClock())
        // Sorted outside the lock, which the orchestrator's observers wait on.
        let records = state.withLock { Array($0.devices) }.sorted { $0.key < $1.key }.map(\.value)
        return DeviceFamilies.render(records, now: now, wallNow: wallNow)
    }

    /// Ready latency runs from the start of an attempt (`connecting` on an adapter) to `ready`;
    /// an attempt that ends anywhere else (backing off, degraded, idle) records nothing. The link
    /// is up from the first linked state until the first unlinked one.
    static func noteTimings(_ record: inout DeviceRecord, from: DeviceState, to: DeviceState, at instant: MonotonicInstant) {
        switch to {
        case .connecting(let adapter):
            record.connectingSince = adapter == nil ? nil : instant
        case .discovering, .pairing:
            break
        case .ready:
            if let start = record.connectingSince {
                record.figures.readyLatency.record(seconds: Double(max(0, instant.nanoseconds - start.nanoseconds)) / 1e9)
            }
            record.connectingSince = nil
        default:
            record.connectingSince = nil
        }
        if to.isLinked, !from.isLinked || record.linkedSince == nil {
            record.linkedSince = instant
        } else if !to.isLinked {
            record.linkedSince = nil
        }
    }
}
