// The gate keeps its own ledger of grants because the device snapshots lag behind: between a
// grant and the device reporting `attempting`, a second evaluation must still see the adapter as
// busy, or two attempts could start on one adapter.

/// Fleet-wide gating of connection attempts: one attempt in flight per adapter, a token bucket
/// across the fleet, and only into free slots.
///
/// A value type with no clock of its own: `now` is passed in. The runtime must call
/// `attemptFinished(device:)` when a granted attempt ends, whatever the outcome; a grant is also
/// forgotten once the device's snapshot shows it connected or the device disappears.
public struct AttemptGate: Hashable, Sendable {
    public private(set) var bucket: AttemptTokenBucket
    /// Granted attempts not yet reported finished.
    public private(set) var inFlight: [DeviceID: AdapterID] = [:]

    public init(limit: AttemptRateLimit, now: MonotonicInstant) {
        bucket = AttemptTokenBucket(limit: limit, now: now)
    }

    public mutating func attemptFinished(device: DeviceID) {
        inFlight[device] = nil
    }

    public mutating func reconfigure(_ limit: AttemptRateLimit, now: MonotonicInstant) {
        bucket.reconfigure(limit, now: now)
    }

    /// Drops ledger entries the snapshots prove are over.
    mutating func reconcile(with devices: [DeviceID: PoolDeviceSnapshot]) {
        for (device, _) in inFlight {
            guard let snapshot = devices[device] else {
                inFlight[device] = nil
                continue
            }
            if case .connected = snapshot.link { inFlight[device] = nil }
        }
    }

    /// Grants what can start now (pinned first, then the adapter with the most devices waiting,
    /// then `order`) and explains every device left waiting.
    mutating func grant(
        order: [DeviceID],
        placements: [DeviceID: AdapterID],
        devices: [DeviceID: PoolDeviceSnapshot],
        configuration: PoolConfiguration,
        now: MonotonicInstant
    ) -> (grants: [AttemptGrant], suppressed: [DeviceID: AttemptSuppression]) {
        reconcile(with: devices)
        var busy: Set<AdapterID> = Set(inFlight.values)
        // Adapters where an attempt is being called off (its device evicted, held, or no longer
        // this gateway's: placed nowhere while still attempting): its `Disconnect` is on its way
        // and bluetoothd has not answered the cancelled `Connect` yet.
        var cancelling: Set<AdapterID> = []
        var occupancy: [AdapterID: Int] = [:]
        var total = 0
        for snapshot in devices.values {
            let adapter = snapshot.link.adapter ?? inFlight[snapshot.id]
            guard let adapter else { continue }
            occupancy[adapter, default: 0] += 1
            total += 1
            if snapshot.link.isAttempting {
                busy.insert(adapter)
                if placements[snapshot.id] == nil { cancelling.insert(adapter) }
            }
        }

        // Candidates: placed, asking, not yet linked or granted.
        let candidates: [(snapshot: PoolDeviceSnapshot, adapter: AdapterID)] = order.compactMap { device in
            guard let snapshot = devices[device], let adapter = placements[device],
                  snapshot.wantsAttempt, snapshot.link == .disconnected, inFlight[device] == nil
            else { return nil }
            return (snapshot, adapter)
        }
        // When tokens are scarce, the adapter with the most devices waiting gets one first: the
        // longest queue decides when the fleet has recovered. Pinned devices still come first,
        // and the sort is stable, so placement order breaks ties.
        var backlog: [AdapterID: Int] = [:]
        for candidate in candidates { backlog[candidate.adapter, default: 0] += 1 }
        let prioritized = candidates.enumerated().sorted { lhs, rhs in
            let left = (lhs.element.snapshot.isPinned, backlog[lhs.element.adapter] ?? 0)
            let right = (rhs.element.snapshot.isPinned, backlog[rhs.element.adapter] ?? 0)
            if left.0 != right.0 { return left.0 }
            if left.1 != right.1 { return left.1 > right.1 }
            return lhs.offset < rhs.offset
        }.map(\.element)

        var grants: [AttemptGrant] = []
        var suppressed: [DeviceID: AttemptSuppression] = [:]
        for (snapshot, adapter) in prioritized {
            let device = snapshot.id
            if snapshot.restoreInProgress {
                suppressed[device] = .restoreInProgress
            } else if busy.contains(adapter), !snapshot.waitsForWake || cancelling.contains(adapter) {
                // A sleeper's pending Connect does not wait for another device's attempt (Linux
                // waits for both by scanning), but it does wait for one being called off:
                // bluetoothd 5.66 given a Connect while it cancels another on the same adapter
                // lost track of the new link's ATT channel (`g_io_channel_unref: assertion
                // 'channel != NULL' failed`), and the kernel dropped the link 2.5 s later as
                // unused — a cuff's first wake lost on the real stack (NOTES.md).
                suppressed[device] = .adapterBusy(adapter)
            } else if occupancy[adapter, default: 0] >= configuration.slots(for: adapter) {
                suppressed[device] = .slotsHeld(adapter)
            } else if !snapshot.isPinned, total >= configuration.maxConnections {
                suppressed[device] = .maxConnections
            } else if !snapshot.waitsForWake, !bucket.take(now: now) {
                suppressed[device] = .rateLimited
            } else {
                grants.append(AttemptGrant(device: device, adapter: adapter))
                inFlight[device] = adapter
                // A pending Connect leaves the adapter free for an attempt (the ledger still
                // counts its slot until the grant comes back as `standing`).
                if !snapshot.waitsForWake { busy.insert(adapter) }
                occupancy[adapter, default: 0] += 1
                total += 1
            }
        }
        return (grants, suppressed)
    }
}
