import FleetControl
import FleetCore

// The only place the runtime's status meets the control interface's records: FleetStatus keeps
// FleetCore's types, the control interface speaks strings and counts that stay stable when the
// runtime's types change.

extension FleetStatus {
    /// The status part of `GetStatus` (devices are listed by `ListDevices`).
    public func controlStatus(version: String) -> ControlStatus {
        ControlStatus(
            version: version, bluetoothdPresent: bluetoothdPresent, pinnedReady: UInt32(clamping: pinnedReady),
            pinnedTotal: UInt32(clamping: pinnedTotal), poolConnected: UInt32(clamping: poolConnected),
            deviceCount: UInt32(clamping: devices.count), summary: summary,
            adapters: adapters.sorted { $0.id < $1.id }.map(\.controlAdapter))
    }

    /// Every device, ordered by address.
    public var controlDevices: [ControlDevice] {
        devices.sorted { $0.id < $1.id }.map { $0.controlDevice(now: capturedAt) }
    }

    /// The device with `address`; the public-address one when a public and a random device
    /// share the six bytes.
    public func device(address: BluetoothAddress) -> Device? {
        let matches = devices.filter { $0.id.address == address }
        return matches.first { $0.id.addressType == .public } ?? matches.first
    }
}

extension FleetStatus.Adapter {
    public var controlAdapter: ControlAdapter {
        ControlAdapter(
            id: id.name, powered: powered, slots: UInt32(clamping: slots), used: UInt32(clamping: linksAndAttempts),
            discovering: discovering)
    }
}

extension FleetStatus.Device {
    /// `now` is the snapshot's instant, to turn deadlines into "seconds from now".
    public func controlDevice(now: MonotonicInstant?) -> ControlDevice {
        let detail = StateDetail(state, now: now)
        return ControlDevice(
            address: id.address.description, addressType: id.addressType.rawValue, name: name, pinned: pinned,
            className: className, state: state.name, stateReason: detail.reason ?? waitingFor?.rawValue, retryAttempt: detail.attempt,
            nextAttemptIn: detail.secondsToDeadline, adapter: adapter?.name,
            rssi: rssi.map { Int16(clamping: $0) }, lastValue: lastValue, sessions: sessions, reconnects: reconnects,
            notifications: UInt64(clamping: notifications), decodeErrors: UInt64(clamping: decodeErrors),
            lastError: lastFailure?.rawValue, lastValueTime: lastValueAt?.timeIntervalSince1970,
            owner: owner)
    }
}

/// What a `DeviceState` says beyond its name, in the control interface's terms.
struct StateDetail: Equatable {
    var reason: String?
    var attempt: UInt32?
    var secondsToDeadline: Double?

    init(_ state: DeviceState, now: MonotonicInstant?) {
        var deadline: MonotonicInstant?
        switch state {
        case .idle, .asleep, .resolving, .connecting, .discovering, .pairing, .ready:
            break
        case .degraded(.subscriptionsIncomplete):
            reason = "subscriptionsIncomplete"
        case .degraded(.writesFailing):
            reason = "writesFailing"
        case .backingOff(let attempt, let until):
            self.attempt = UInt32(clamping: attempt)
            deadline = until
        case .suspended(.bluetoothdUnavailable):
            reason = "bluetoothdUnavailable"
        case .suspended(.noPoweredAdapter):
            reason = "noPoweredAdapter"
        case .suspended(.circuitOpen(let until)):
            reason = "circuitOpen"
            deadline = until
        case .suspended(.budgetExhausted(let failureClass, let until)):
            reason = "budgetExhausted(\(failureClass.rawValue))"
            deadline = until
        case .suspended(.gaveUp(let failureClass)):
            reason = "gaveUp(\(failureClass.rawValue))"
        }
        if let deadline, let now {
            secondsToDeadline = max(0, deadline.duration(since: now).secondsDouble)
        }
    }
}
