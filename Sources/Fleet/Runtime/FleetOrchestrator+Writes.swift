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
