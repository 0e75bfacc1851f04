/// What a device's machine (run by the runtime's `DeviceActor`) reports to the fleet: the effects that are not about the device's own
/// link (the gate, the state file, logs and metrics) and the values it read.
public enum DeviceOutput: Sendable, Hashable, Codable {
    case requestAttempt(DeviceID)
    case withdrawAttemptRequest(DeviceID)
    case attemptFinished(DeviceID, adapter: AdapterID, outcome: DeviceEffect.AttemptOutcome)
    case standingEnded(DeviceID, adapter: AdapterID)
    case persist(DeviceID, DeviceEffect.StoreUpdate)
    case lifecycle(DeviceID, DeviceEffect.LifecycleEvent)
    /// A value read on connect (notifications arrive through the data path, not here).
    case value(DeviceID, characteristic: String, bytes: [UInt8])
    /// The device's machine started (true) or stopped looking for it by discovery.
    case resolving(DeviceID, Bool)
    case resumeWrites(DeviceID)
    /// A write's outcome, for the device's machine (write timer, consecutive failures).
    case writeOutcome(DeviceID, DeviceEvent)
}

extension DeviceOutput {
    /// The device whose machine reported it.
    public var device: DeviceID {
        switch self {
        case .requestAttempt(let id), .withdrawAttemptRequest(let id), .attemptFinished(let id, _, _), .standingEnded(let id, _),
            .persist(let id, _),
            .lifecycle(let id, _), .value(let id, _, _), .resolving(let id, _), .resumeWrites(let id), .writeOutcome(let id, _):
            id
        }
    }
}
