// Modelled on connection-pool state machines that return actions: the daemon feeds snapshots in
// and executes the plan; this type never does I/O, never sleeps, and reads no clock.

/// Decides which devices the fleet should keep connected, on which adapter, which links to close
/// to make room, and which connection attempts may start now.
///
/// Rules, in order of precedence:
/// 1. Pinned devices that are eligible and reachable always win slots over pool devices; a pool
///    device is evicted if a pinned device needs its slot.
/// 2. `maxConnections` bounds pinned plus pool links; pinned devices count but are never refused
///    for it, and the pool fills what remains.
/// 3. Pool devices are ranked by `PoolScoreWeights` score. A connected pool device keeps its slot
///    until it has dwelt `minimumDwell` and a challenger beats its score by more than
///    `scoreMargin` (hysteresis, so devices do not flap).
/// 4. A device is placed on the reaching adapter with the best RSSI that has a free slot.
/// 5. Attempts: one in flight per adapter, the fleet token bucket, free slots only, and none
///    while the engine is stopped, bluetoothd is gone, the adapter is off, the device is
///    ineligible or a restore is in progress for it.
///
/// Ties are broken by `DeviceID` and `AdapterID`, so equal inputs give equal plans. Mutable state
/// is the attempt gate (token bucket and grants in flight) and the slot reservations of placed
/// devices that have no link yet, which keep the plan stable between evaluations; dwell time is
/// computed from the snapshots' `connected(since:)`. Once a plan has been carried out,
/// evaluating again at the same instant asks for no further evictions.
///
/// A pool device evicted from one adapter may be placed on another in the same plan (it then
/// reconnects there); it is never placed on the adapter it is evicted from.
public struct PoolPolicy: Hashable, Sendable {
    public private(set) var configuration: PoolConfiguration
    public private(set) var gate: AttemptGate
    /// Where each placed device without a link was placed last time; it keeps that slot (see
    /// `PoolPlacement`) until it connects or is no longer wanted.
    public private(set) var reservations: [DeviceID: AdapterID] = [:]

    public init(configuration: PoolConfiguration, now: MonotonicInstant) {
        self.configuration = configuration
        self.gate = AttemptGate(limit: configuration.attemptRateLimit, now: now)
    }

    /// Applies a reloaded configuration; grants in flight stay counted.
    public mutating func reconfigure(_ configuration: PoolConfiguration, now: MonotonicInstant) {
        self.configuration = configuration
        gate.reconfigure(configuration.attemptRateLimit, now: now)
    }

    /// A granted attempt ended (connected, failed, cancelled or timed out).
    public mutating func attemptFinished(device: DeviceID) {
        gate.attemptFinished(device: device)
    }

    /// Evaluates the fleet. Call it on every change that matters (device wants an attempt,
    /// attempt finished, link up or down, adapter or bluetoothd change, reload) and at
    /// `nextGrantInstant`. Devices are identified by `id`; if one appears twice, the last wins.
    public mutating func evaluate(
        devices: [PoolDeviceSnapshot],
        adapters: [AdapterSnapshot],
        conditions: PoolCentralConditions,
        now: MonotonicInstant
    ) -> PoolPlan {
        var byID: [DeviceID: PoolDeviceSnapshot] = [:]
        for device in devices { byID[device.id] = device }
        let unique = byID.values.sorted { $0.id < $1.id }
        let usable = Set(adapters.filter(\.isPowered).map(\.id)).sorted()

        let placement = PoolPlacement(
            devices: unique, usable: usable, configuration: configuration, reservations: reservations, now: now
        )
        var plan = PoolPlan(placements: placement.placements)

        let canAct = conditions.bluetoothdPresent && conditions.engineRunning
        if canAct {
            reservations = placement.reservations
            plan.evictions = placement.evictions.values.sorted { $0.device < $1.device }
            let (grants, suppressed) = gate.grant(
                order: placement.order,
                placements: placement.placements,
                devices: byID,
                configuration: configuration,
                now: now
            )
            plan.grants = grants
            plan.suppressed = suppressed
            if suppressed.values.contains(.rateLimited) {
                plan.nextGrantInstant = gate.bucket.nextRefillInstant
            }
        } else {
            gate.reconcile(with: byID)
        }

        // Explain every other device that wants an attempt and is not getting one.
        let known = Set(adapters.map(\.id))
        for device in unique where device.wantsAttempt && device.link == .disconnected {
            guard plan.suppressed[device.id] == nil, !plan.grants.contains(where: { $0.device == device.id }),
                  gate.inFlight[device.id] == nil
            else { continue }
            plan.suppressed[device.id] = Self.reason(device, conditions: conditions, usable: usable, known: known)
        }
        return plan
    }

    private static func reason(
        _ device: PoolDeviceSnapshot,
        conditions: PoolCentralConditions,
        usable: [AdapterID],
        known: Set<AdapterID>
    ) -> AttemptSuppression {
        if !conditions.engineRunning { return .engineStopped }
        if !conditions.bluetoothdPresent { return .bluetoothdGone }
        if !device.isEligible { return .notEligible }
        if device.restoreInProgress { return .restoreInProgress }
        if !usable.contains(where: { device.isReachable(on: $0) }) {
            return known.contains(where: { device.isReachable(on: $0) }) ? .adapterOff : .unreachable
        }
        // Placed devices that want an attempt are always granted or explained by the gate.
        return .notSelected
    }
}
