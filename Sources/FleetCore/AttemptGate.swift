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

    /// Grants what can start now, in `order`, and explains every device left waiting.
    mutating func grant(
        order: [DeviceID],
        placements: [DeviceID: AdapterID],
        devices: [DeviceID: PoolDeviceSnapshot],
        configuration: PoolConfiguration,
        now: MonotonicInstant
    ) -> (grants: [AttemptGrant], suppressed: [DeviceID: AttemptSuppression]) {
        reconcile(with: devices)
        var busy: Set<AdapterID> = Set(inFlight.values)
        var occupancy: [AdapterID: Int] = [:]
        var total = 0
        for snapshot in devices.values {
            let adapter = snapshot.link.adapter ?? inFlight[snapshot.id]
            guard let adapter else { continue }
            occupancy[adapter, default: 0] += 1
            total += 1
            if snapshot.link.isAttempting { busy.insert(adapter) }
        }

        var grants: [AttemptGrant] = []
        var suppressed: [DeviceID: AttemptSuppression] = [:]
        for device in order {
            guard let snapshot = devices[device], let adapter = placements[device],
                  snapshot.wantsAttempt, snapshot.link == .disconnected, inFlight[device] == nil
            else { continue }
            if snapshot.restoreInProgress {
                suppressed[device] = .restoreInProgress
            } else if busy.contains(adapter) {
                suppressed[device] = .adapterBusy(adapter)
            } else if occupancy[adapter, default: 0] >= configuration.slots(for: adapter) {
                suppressed[device] = .slotsHeld(adapter)
            } else if !snapshot.isPinned, total >= configuration.maxConnections {
                suppressed[device] = .maxConnections
            } else if !bucket.take(now: now) {
                suppressed[device] = .rateLimited
            } else {
                grants.append(AttemptGrant(device: device, adapter: adapter))
                inFlight[device] = adapter
                busy.insert(adapter)
                occupancy[adapter, default: 0] += 1
                total += 1
            }
        }
        return (grants, suppressed)
    }
}
