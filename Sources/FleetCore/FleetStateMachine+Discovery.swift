// Discovery per adapter, decided here and nowhere else: after every input the machine compares
// what each adapter's discovery should be with what bluetoothd last accepted, and asks for at
// most one call per adapter. The executor runs the call as a task and feeds its outcome back.

extension FleetStateMachine {
    /// What discovery on `adapter` should be now: unfiltered while a device is missing (a pinned
    /// or restored device is looked for whatever it advertises and however weak it is heard;
    /// so is everything during a scan someone asked for, `scan(until:)`, and a pinned device
    /// waiting to be given by the ownership machine, which bids only on what it hears;
    /// pool admission applies its own filters to what else appears), the configured pool filter
    /// (`scan_services`, `min_rssi`) while only the pool looks for candidates there, else off.
    func wantedDiscovery(on adapter: Adapter) -> DiscoveryFilter? {
        guard running, adapter.selected else { return nil }
        if !resolving.isEmpty || !lookingElsewhere.isEmpty || scanUntil != nil || listensForOwnership || awaitsUnheardSleeper {
            return .anyDevice
        }
        if adapter.poolSearching { return DiscoveryFilter(uuids: configuration.scanUUIDs, minimumRSSI: configuration.minimumRSSI) }
        return nil
    }

    /// Asks for the discovery calls that bring each adapter towards what is wanted: none to an
    /// adapter that is not powered or while bluetoothd is away (discovery ended with them), one
    /// at a time per adapter, none during a failed call's backoff (whose end the retry timer
    /// marks). An adapter no longer selected is stopped. A search for a missing device that has
    /// run `AdapterDiscovery.searchRefreshInterval` is restarted (the same timer marks when).
    mutating func driveDiscovery(now: MonotonicInstant, _ actions: inout [Action]) {
        guard running else { return }
        var earliestRetry: MonotonicInstant?
        // A scan asked for ends at its deadline (the retry timer wakes the machine then).
        if let until = scanUntil {
            if now >= until { scanUntil = nil } else { earliestRetry = until }
        }
        for id in adapters.keys.sorted() {
            guard let adapter = adapters[id] else { continue }
            guard bluetoothdPresent, adapter.powered else {
                adapters[id]?.discovery.reset()
                continue
            }
            let wanted = wantedDiscovery(on: adapter)
            // A search for a missing device is refreshed every `searchRefreshInterval`
            // (a stalled kernel scan otherwise hides the device for good).
            // A scan alone is not refreshed: a restart would clear what bluetoothd heard so far.
            // So is listening for ownership: bluetoothd keeps a device's last RSSI until discovery
            // stops, and a gateway must not bid on a device it stopped hearing (linked to another,
            // gone) — a stale bid could win a dwell and hand a link to a gateway that cannot
            // reach the device. The restart clears every RSSI; what is still heard reports again.
            if wanted == .anyDevice, !resolving.isEmpty || listensForOwnership || awaitsUnheardSleeper, let started = adapter.discovery.startedAt,
                adapter.discovery.inFlight == nil
            {
                let due = started.advanced(by: AdapterDiscovery.searchRefreshInterval)
                if now >= due {
                    adapters[id]?.discovery.requestRestart()
                } else {
                    earliestRetry = min(earliestRetry ?? due, due)
                }
            }
            if let call = adapters[id]?.discovery.nextCall(wanted: wanted, now: now, number: discoveryCalls + 1) {
                discoveryCalls += 1
                actions.append(.discover(id, call, number: discoveryCalls))
            }
            // Only a backoff still to come needs the timer (one that ended was used just now).
            if let retry = adapters[id]?.discovery.retryAt, retry > now, adapters[id]?.discovery.inFlight == nil {
                earliestRetry = min(earliestRetry ?? retry, retry)
            }
        }
        if earliestRetry != discoveryRetryTimer {
            discoveryRetryTimer = earliestRetry
            actions.append(.scheduleDiscoveryRetry(at: earliestRetry))
        }
    }

    /// bluetoothd answered a discovery call. A failure is published (the journal, status and
    /// metrics count it) with when it is tried again.
    mutating func discoveryFinished(
        _ adapter: AdapterID, number: UInt64, failure: DeviceEvent.Failure?, now: MonotonicInstant, _ actions: inout [Action]
    ) {
        guard let call = adapters[adapter]?.discovery.inFlight,
            adapters[adapter]?.discovery.finished(number: number, failure: failure, now: now, random: &discoveryJitter) == true,
            let failure, let discovery = adapters[adapter]?.discovery, let retryAt = discovery.retryAt
        else { return }
        actions.append(.publish(.discoveryFailed(
            adapter, call: call, failure, inARow: discovery.sameFailureInARow, retryIn: retryAt.duration(since: now))))
    }

    /// A pairing through `adapter` ended. bluetoothd 5.66 stops the adapter's discovery for the
    /// length of a `Pair` it makes (`adapter_create_bonding` → `suspend_discovery`) and starts it
    /// again only `IDLE_DISCOV_TIMEOUT` (5 s, a whole-second GLib timer) after the bonding
    /// completes (`resume_discovery`, src/adapter.c): on the real stack a scale waking next to a
    /// cuff that had just bonded went unheard for those seconds, its first wake 6 s late. A
    /// `StartDiscovery` after a stop starts the kernel's discovery at once
    /// (`update_discovery_filter` → `trigger_start_discovery(adapter, 0)`), so a discovery of
    /// ours that runs there is restarted now.
    mutating func restartDiscoveryAfterPairing(on adapter: AdapterID) {
        adapters[adapter]?.discovery.requestRestart()
    }

    /// A device's machine started or stopped looking for it.
    mutating func resolvingChanged(_ id: DeviceID, _ looking: Bool) {
        if looking, devices[id] != nil { resolving.insert(id) } else { resolving.remove(id) }
    }
}

extension FleetStateMachine {
    /// A pinned device asleep that bluetoothd has no object for and that never linked here (just
    /// pinned, before its first wake): its pending Connect needs the object its next
    /// advertisement brings, and a device that sleeps between measurements is not looked for
    /// as a missing one is. Without this the real stack's scale, pinned 4 s before its first
    /// wake, was heard only when something else made discovery unfiltered, 6 s into a 15 s
    /// wake (its service is outside the pool's scan filter).
    var awaitsUnheardSleeper: Bool {
        devices.values.contains { device in
            device.pinned && device.state == .asleep && device.objects.isEmpty && device.lastAdapter == nil && pinnedWanted(device)
        }
    }
}
