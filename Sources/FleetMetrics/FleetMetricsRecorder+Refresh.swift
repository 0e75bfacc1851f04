import CoreMetrics
import Fleet
import FleetCore

extension FleetMetricsRecorder {
    /// Brings the snapshot figures up to date just before a scrape: fleet and adapter gauges,
    /// value and write counts and queue depths from `snapshot` (nil when the orchestrator did
    /// not answer in time: those keep their last values), and each device's time-dependent
    /// gauges (connected seconds, backoff deadline) from the clock.
    public func refresh(from snapshot: FleetMetricsSnapshot?) {
        let now = clock.now()
        let wallNow = wallClock()
        let factory = self.factory
        state.withLock { state in
            if let snapshot {
                let status = snapshot.status
                pinnedReady.record(Double(status.pinnedReady))
                pinnedDevices.record(Double(status.pinnedTotal))
                bluetoothdUp.record(status.bluetoothdPresent ? 1.0 : 0.0)
                Self.refreshAdapters(status.adapters, in: &state, factory: factory)
                for device in status.devices {
                    Self.refreshDevice(device, writes: snapshot.writes[device.id], in: &state, factory: factory)
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

    private static func refreshDevice(
        _ device: FleetStatus.Device, writes: FleetMetricsSnapshot.DeviceWrites?, in state: inout State, factory: any MetricsFactory
    ) {
        let observed = FleetObservedDevice(id: device.id, name: device.name, className: device.className, pinned: device.pinned)
        var record = state.devices[device.id] ?? makeRecord(observed, factory: factory)
        if !record.labels.matches(DeviceLabels(observed)) {
            // A reload renamed the device or changed its class: its series start again under the
            // new labels (value and write counters from the fleet's totals, the rest from zero).
            record.counters.destroy()
            record.gauges.destroy()
            let (adapter, deviceState) = (record.adapter, record.state)
            record = makeRecord(observed, factory: factory)
            record.state = deviceState
            record.gauges.setState(deviceState)
            if let adapter { setAdapter(adapter, of: &record, factory: factory) }
        }
        if !record.stateFromEvents {
            // Registered after the device's last change: the snapshot is all there is.
            record.state = device.state
            record.gauges.setState(device.state)
        }
        if let adapter = device.adapter { setAdapter(adapter, of: &record, factory: factory) }
        // The fleet counts values and writes per device; counters advance by what is new since the last scrape.
        advance(record.counters.notifications, to: device.notifications, from: &record.valuesSeen)
        advance(record.counters.decodeErrors, to: device.decodeErrors, from: &record.decodeErrorsSeen)
        if let writes {
            let sent: [OutgoingWriteType: Int] = [
                .withResponse: writes.counters.sentWithResponse, .withoutResponse: writes.counters.sentWithoutResponse,
            ]
            for (type, total) in sent {
                guard let counter = record.counters.writes[type] else { continue }
                advance(counter, to: total, from: &record.writesSeen[type, default: 0])
            }
            for qos in OutgoingQoS.allCases {
                let depth = writes.queueDepths[qos] ?? 0
                record.queueDepths[qos] = depth
                record.gauges.queueDepth[qos]?.record(Double(depth))
            }
        }
        state.devices[device.id] = record
    }

    /// Adds to `counter` what `total` gained over `seen`, and remembers `total`. A total that went
    /// down (its source restarted counting) adds nothing.
    private static func advance(_ counter: Counter, to total: Int, from seen: inout Int) {
        if total > seen { counter.increment(by: total - seen) }
        seen = total
    }
}
