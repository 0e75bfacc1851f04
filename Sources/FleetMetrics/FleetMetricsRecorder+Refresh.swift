import CoreMetrics
import Fleet
import FleetCore

extension FleetMetricsRecorder {
    /// Brings the snapshot figures up to date just before a scrape: fleet and adapter gauges and
    /// value counts from `status` (nil when the orchestrator did not answer in time: those keep
    /// their last values), and each device's time-dependent gauges (connected seconds, backoff
    /// deadline) from the clock.
    public func refresh(from status: FleetStatus?) {
        let now = clock.now()
        let wallNow = wallClock()
        let factory = self.factory
        state.withLock { state in
            if let status {
                pinnedReady.record(Double(status.pinnedReady))
                pinnedDevices.record(Double(status.pinnedTotal))
                bluetoothdUp.record(status.bluetoothdPresent ? 1.0 : 0.0)
                Self.refreshAdapters(status.adapters, in: &state, factory: factory)
                for device in status.devices {
                    Self.refreshDevice(device, in: &state, factory: factory)
                }
            }
            for (id, record) in state.devices {
                let connected = record.linkedSince.map { now.duration(since: $0).secondsDouble } ?? 0
                record.gauges.connectedSeconds.record(max(0, connected))
                if case .backingOff(_, let deadline) = record.state {
                    record.gauges.backoffDeadline.record(wallNow + deadline.duration(since: now).secondsDouble)
                } else {
                    record.gauges.backoffDeadline.record(0.0)
                }
                state.devices[id] = record
            }
        }
    }

    private static func refreshAdapters(_ adapters: [FleetStatus.Adapter], in state: inout State, factory: any MetricsFactory) {
        let present = Set(adapters.map(\.id))
        for (id, gauges) in state.adapters where !present.contains(id) {
            gauges.destroy()
            state.adapters[id] = nil
        }
        for adapter in adapters {
            let gauges = state.adapters[adapter.id] ?? {
                let labels = [("adapter", adapter.id.name)]
                return AdapterGauges(
                    slots: Gauge(label: FleetMetricCatalogue.adapterSlots.name, dimensions: labels, factory: factory),
                    used: Gauge(label: FleetMetricCatalogue.adapterSlotsUsed.name, dimensions: labels, factory: factory),
                    inFlight: Gauge(label: FleetMetricCatalogue.adapterAttemptsInFlight.name, dimensions: labels, factory: factory),
                    powered: Gauge(label: FleetMetricCatalogue.adapterPowered.name, dimensions: labels, factory: factory))
            }()
            state.adapters[adapter.id] = gauges
            gauges.slots.record(Double(adapter.slots))
            gauges.used.record(Double(adapter.linksAndAttempts))
            gauges.inFlight.record(Double(adapter.attemptsInFlight))
            gauges.powered.record(adapter.powered ? 1.0 : 0.0)
        }
    }

    private static func refreshDevice(_ device: FleetStatus.Device, in state: inout State, factory: any MetricsFactory) {
        var record = state.devices[device.id] ?? makeRecord(
            FleetObservedDevice(id: device.id, name: device.name, className: device.className, pinned: device.pinned),
            factory: factory)
        if !record.stateFromEvents {
            // Registered after the device's last change: the snapshot is all there is.
            record.state = device.state
            record.gauges.setState(device.state)
        }
        if let adapter = device.adapter { setAdapter(adapter, of: &record, factory: factory) }
        // The value pipeline counts per device; the counters advance by what arrived since the last scrape.
        if device.notifications > record.valuesSeen {
            record.counters.notifications.increment(by: device.notifications - record.valuesSeen)
        }
        record.valuesSeen = device.notifications
        if device.decodeErrors > record.decodeErrorsSeen {
            record.counters.decodeErrors.increment(by: device.decodeErrors - record.decodeErrorsSeen)
        }
        record.decodeErrorsSeen = device.decodeErrors
        state.devices[device.id] = record
    }
}
