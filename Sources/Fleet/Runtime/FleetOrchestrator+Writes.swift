import FleetCore

// The write path's public face. Writes are queued per device and QoS within the class's bounds
// and leave in the order FleetCore's scheduler picks (see `WriteCoordinator`).

extension FleetOrchestrator {
    /// Queues a GATT write to a device of the fleet. It goes out once the device is ready and its
    /// turn comes; a full queue refuses it (`queueFull`) rather than growing.
    ///
    /// - Parameters:
    ///   - qos: nil takes the class's `default_qos`.
    ///   - replaceable: a newer value may replace this one while queued (the class's coalescing
    ///     window), for values where only the latest matters.
    @discardableResult
    public func write(
        _ id: DeviceID, characteristic: String, bytes: [UInt8], qos: OutgoingQoS? = nil, mode: OutgoingWriteMode = .automatic,
        replaceable: Bool = false
    ) async throws(FleetWriteError) -> OutgoingEnqueueResult {
        guard case .writeSettings(let settings)? = await submit(.command(.prepareWrite(id))) else { throw .unknownDevice(id) }
        return try await writes.enqueue(
            id, characteristic: characteristic, bytes: bytes, qos: qos ?? settings.defaultQoS, mode: mode, replaceable: replaceable)
    }

    /// What the device's writes did so far, and its queue depths now.
    public func writeStatus(_ id: DeviceID) async -> (counters: WriteCounters, queueDepths: [OutgoingQoS: Int]) {
        (await writes.counters(for: id), await writes.queueDepths(for: id))
    }
}

// MARK: -

/// Why a write was refused before it was queued.
public enum FleetWriteError: Error, Equatable, Sendable, CustomStringConvertible {
    case unknownDevice(DeviceID)
    /// BlueZ shows no such characteristic on the device (not connected yet, or absent).
    case unknownCharacteristic(DeviceID, String)
    /// Its flags allow neither the requested kind of write nor any other.
    case notWritable(DeviceID, String)
    /// Its queue for this class of service is full: the caller should slow down.
    case queueFull(DeviceID, OutgoingQoS, depth: Int)
    case tooLarge(size: Int, limit: Int)

    public var description: String {
        switch self {
        case .unknownDevice(let id): "\(id.address) is not a device of the fleet"
        case .unknownCharacteristic(let id, let uuid): "\(id.address) has no characteristic \(uuid)"
        case .notWritable(let id, let uuid): "characteristic \(uuid) of \(id.address) cannot be written that way"
        case .queueFull(let id, let qos, let depth): "the \(qos) write queue of \(id.address) is full (\(depth) writes)"
        case .tooLarge(let size, let limit): "a \(size)-byte write exceeds the \(limit)-byte limit"
        }
    }
}
