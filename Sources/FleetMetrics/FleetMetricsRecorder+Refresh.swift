import CoreMetrics
import Fleet
import FleetCore

extension FleetMetricsRecorder {
    /// Brings the snapshot figures up to date just before a scrape: fleet and adapter gauges,
    /// value and write counts and queue depths from `snapshot` (nil when the orchestrator did
    /// not answer in time: those keep their last values). A device's time-dependent gauges are
    /// computed from the clock as the families are rendered (`deviceFamilies()`).
    public func refresh(from snapshot: FleetMetricsSnapshot?) {
        let factory = self.factory
        state.withLock { state in
            if let snapshot {
                let status = snapshot.status
                pinnedReady.record(Double(status.pinnedReady))
                pinnedDevices.record(Double(status.pinnedTotal))
                bluetoothdUp.record(status.bluetoothdPresent ? 1.0 : 0.0)
                Self.refreshAdapters(status.adapters, in: &state, factory: factory)
                // Only devices the events added: a snapshot is taken before the scrape renders,
                // and one that still lists a device removed meanwhile must not bring its series back.
                for device in status.devices where state.devices[device.id] != nil {
                    Self.refreshDevice(device, writes: snapshot.writes[device.id], in: &state)
                }
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
            var gauges = state.adapters[adapter.id] ?? {
                let labels = [("adapter", adapter.id.name)]
                return AdapterGauges(
                    slots: Gauge(label: FleetMetricCatalogue.adapterSlots.name, dimensions: labels, factory: factory),
                    used: Gauge(label: FleetMetricCatalogue.adapterSlotsUsed.name, dimensions: labels, factory: factory),
                    inFlight: Gauge(label: FleetMetricCatalogue.adapterAttemptsInFlight.name, dimensions: labels, factory: factory),
                    powered: Gauge(label: FleetMetricCatalogue.adapterPowered.name, dimensions: labels, factory: factory),
                    discoveryErrors: Counter(label: FleetMetricCatalogue.adapterDiscoveryErrors.name, dimensions: labels, factory: factory))
            }()
            if adapter.discoveryErrors > gauges.discoveryErrorsSeen {
                gauges.discoveryErrors.increment(by: adapter.discoveryErrors - gauges.discoveryErrorsSeen)
            }
            gauges.discoveryErrorsSeen = adapter.discoveryErrors
            state.adapters[adapter.id] = gauges
            gauges.slots.record(Double(adapter.slots))
            gauges.used.record(Double(adapter.linksAndAttempts))
            gauges.inFlight.record(Double(adapter.attemptsInFlight))
            gauges.powered.record(adapter.powered ? 1.0 : 0.0)
        }
    }

    private static func refreshDevice(_ device: FleetStatus.Device, writes: FleetMetricsSnapshot.DeviceWrites?, in state: inout State) {
        let observed = FleetObservedDevice(id: device.id, name: device.name, className: device.className, pinned: device.pinned)
        // Taken out and put back, so that its dictionaries are changed in place, not copied.
        guard var record = state.devices.removeValue(forKey: device.id) else { return }
        if !record.labels.matches(DeviceLabels(observed)) {
            // A reload renamed the device or changed its class: its series start again under the
            // new labels (value and write counters from the fleet's totals, the rest from zero).
            let (adapter, deviceState) = (record.adapter, record.state)
            record = DeviceRecord(labels: DeviceLabels(observed))
            record.state = deviceState
            record.adapter = adapter
        }
        if !record.stateFromEvents {
            // Registered after the device's last change: the snapshot is all there is.
            record.state = device.state
        }
        if let adapter = device.adapter { record.adapter = adapter }
        if let last = device.lastValueAt { record.lastValueTimestamp = last.timeIntervalSince1970 }
        // The fleet counts values and writes per device; counters advance by what is new since the last scrape.
        advance(&record.figures.notifications, to: device.notifications, from: &record.valuesSeen)
        advance(&record.figures.decodeErrors, to: device.decodeErrors, from: &record.decodeErrorsSeen)
        if let writes {
            let sent: [OutgoingWriteType: Int] = [
                .withResponse: writes.counters.sentWithResponse, .withoutResponse: writes.counters.sentWithoutResponse,
            ]
            for (type, total) in sent {
                advance(&record.figures.writes[type, default: 0], to: total, from: &record.writesSeen[type, default: 0])
            }
            for qos in OutgoingQoS.allCases { record.queueDepths[qos] = writes.queueDepths[qos] ?? 0 }
        }
        state.devices[device.id] = record
    }

    /// Adds to `counter` what `total` gained over `seen`, and remembers `total`. A total that went
    /// down (its source restarted counting) adds nothing.
    private static func advance(_ counter: inout Int, to total: Int, from seen: inout Int) {
        if total > seen { counter += total - seen }
        seen = total
    }
}
