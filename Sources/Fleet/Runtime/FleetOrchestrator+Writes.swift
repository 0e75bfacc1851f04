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
        guard let device = devices[id] else { throw .unknownDevice(id) }
        let settings = configuration.writeSettings(className: device.className)
        if writeConfigured.insert(id).inserted {
            await writes.configure(id, options: settings.options)
        }
        return try await writes.enqueue(
            id, characteristic: characteristic, bytes: bytes, qos: qos ?? settings.defaultQoS, mode: mode, replaceable: replaceable)
    }

    /// What the device's writes did so far, and its queue depths now.
    public func writeStatus(_ id: DeviceID) async -> (counters: WriteCounters, queueDepths: [OutgoingQoS: Int]) {
        (await writes.counters(for: id), await writes.queueDepths(for: id))
    }

    /// Opens the device's write lane when it becomes usable and closes it when it stops being so
    /// (its queued writes wait for the next link).
    func followWritability(_ id: DeviceID, from: DeviceState, to: DeviceState) async {
        if to.acceptsWrites, !from.acceptsWrites, let device = devices[id] {
            let settings = configuration.writeSettings(className: device.className)
            if writeConfigured.insert(id).inserted { await writes.configure(id, options: settings.options) }
            await writes.linkReady(id, useSocket: configuration.deviceConfiguration(className: device.className).useFileDescriptorPath)
        } else if from.acceptsWrites, !to.acceptsWrites {
            await writes.linkLost(id)
        }
    }

    /// After a reload: every device's write options are taken from its (possibly new) class.
    func refreshWriteOptions() async {
        for id in writeConfigured.sorted() {
            guard let device = devices[id] else { continue }
            await writes.configure(id, options: configuration.writeSettings(className: device.className).options)
        }
    }
}

extension DeviceState {
    /// Ready, or degraded but linked: writes may go out.
    var acceptsWrites: Bool {
        switch self {
        case .ready, .degraded: true
        default: false
        }
    }
}
