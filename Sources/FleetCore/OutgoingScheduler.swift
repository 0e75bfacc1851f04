// Fairness is deficit round robin over bytes (Shreedhar and Varghese): each device with a
// sendable write earns `quantum` bytes per turn and spends them on its writes, so a device with
// large or many writes cannot take more than its share while others wait.

/// Orders every outgoing GATT write of the fleet: bounded queues per device and class of service,
/// pacing by credits (writes without response) and by in-flight limit (writes with response),
/// and fairness across devices.
///
/// Guarantees:
/// - No queue ever holds more than its configured capacity; a write that does not fit is refused
///   with `OutgoingSchedulerError.queueFull` and nothing is dropped silently.
/// - Inside a class, writes go out in the order they were queued.
/// - Inside a device, control goes before normal before bulk, except that a class that could
///   send is never passed over more than `starvationLimit + 2` times.
/// - Across devices, a device that can send is served before any other device has had more than
///   `ceil(maxWriteSize / quantum) + 1` turns, each of at most `quantum + maxWriteSize` bytes.
///
/// A value type with no I/O and no clock: enqueue time is passed in for coalescing.
public struct OutgoingScheduler: Sendable {
    public let configuration: OutgoingConfiguration
    private var devices: [DeviceID: OutgoingDeviceQueues] = [:]
    /// Devices with queued writes, in round-robin order.
    private var ring: [DeviceID] = []
    private var cursor = 0
    /// Whether the device at `cursor` has received its quantum for the current turn.
    private var turnOpen = false
    private var nextSequence: UInt64 = 0
    /// The `sequence` the next write `enqueue` appends will carry, so a sender can recognise its
    /// write when the scheduler releases it.
    public var upcomingSequence: UInt64 { nextSequence }

    public init(configuration: OutgoingConfiguration = OutgoingConfiguration()) {
        self.configuration = configuration
    }

    // MARK: - Devices

    /// Sets a device's options (coalescing window, bounds). Devices not configured use the
    /// defaults. A lowered bound drops nothing already queued; it refuses writes until the
    /// queue is under it.
    public mutating func configure(device: DeviceID, options: OutgoingDeviceOptions) {
        var state = devices[device] ?? OutgoingDeviceQueues(configuration: configuration, options: options)
        state.options = options
        for qos in OutgoingQoS.allCases {
            state.queues[qos.rawValue].setCapacity(options.capacity(for: qos, configuration: configuration))
        }
        devices[device] = state
    }

    /// The link dropped: credits and writes in flight are gone with it; queued writes stay for
    /// the next connection.
    public mutating func linkLost(device: DeviceID) {
        var state = devices[device] ?? OutgoingDeviceQueues(configuration: configuration, options: OutgoingDeviceOptions())
        state.credits = 0
        state.inFlight = 0
        state.linked = false
        devices[device] = state
    }

    /// The device is connected and ready for writes again (after `linkLost`); credits for writes
    /// without response still come from `creditsAvailable`.
    public mutating func linkEstablished(device: DeviceID) {
        var state = devices[device] ?? OutgoingDeviceQueues(configuration: configuration, options: OutgoingDeviceOptions())
        state.linked = true
        devices[device] = state
    }

    /// Whether the device's writes may go out (no `linkLost` since the last `linkEstablished`).
    public func isLinked(device: DeviceID) -> Bool { devices[device]?.linked ?? true }

    /// Forgets a device and everything queued for it; returns how many writes were dropped.
    @discardableResult
    public mutating func removeDevice(_ device: DeviceID) -> Int {
        guard var state = devices.removeValue(forKey: device) else { return 0 }
        let dropped = state.queues.indices.reduce(0) { $0 + state.queues[$1].removeAll() }
        removeFromRing(device)
        return dropped
    }

    /// Takes back the queued write `sequence` of `device` before it was released (its sender
    /// stopped waiting); returns false when it is no longer queued (released already, or never
    /// there). A device left with nothing queued leaves the ring.
    @discardableResult
    public mutating func withdraw(sequence: UInt64, of device: DeviceID) -> Bool {
        guard var state = devices[device] else { return false }
        for index in state.queues.indices where state.queues[index].removeFirst(where: { $0.sequence == sequence }) {
            devices[device] = state
            if state.isEmpty { removeFromRing(device) }
            return true
        }
        return false
    }

    // MARK: - Events from senders and the transport

    /// Queues a write for `device`, or refuses it without side effects.
    @discardableResult
    public mutating func enqueue(
        _ write: OutgoingWrite,
        for device: DeviceID,
        now: MonotonicInstant
    ) throws(OutgoingSchedulerError) -> OutgoingEnqueueResult {
        guard write.bytes.count <= configuration.maxWriteSize else {
            throw .tooLarge(size: write.bytes.count, limit: configuration.maxWriteSize)
        }
        guard let writeType = write.mode.resolve(qos: write.qos, properties: write.characteristic.properties) else {
            throw .notWritable(write.characteristic, write.mode)
        }
        var state = devices[device] ?? OutgoingDeviceQueues(configuration: configuration, options: OutgoingDeviceOptions())
        let index = write.qos.rawValue

        if write.qos != .control, write.isReplaceable, let window = state.options.coalescingWindow {
            var kept: UInt64?
            let replaced = state.queues[index].replaceLast(
                where: { queued in
                    queued.isReplaceable && queued.characteristic == write.characteristic && queued.writeType == writeType
                        && now.duration(since: queued.enqueuedAt) < window
                },
                with: { queued in
                    kept = queued.sequence
                    var updated = queued
                    updated.bytes = write.bytes
                    return updated
                }
            )
            if replaced, let kept {
                devices[device] = state
                return .coalesced(into: kept)
            }
        }

        let queued = OutgoingQueuedWrite(
            characteristic: write.characteristic, bytes: write.bytes, writeType: writeType,
            isReplaceable: write.isReplaceable, enqueuedAt: now, sequence: nextSequence
        )
        guard state.queues[index].append(queued) else {
            throw .queueFull(device, write.qos, depth: state.queues[index].count)
        }
        nextSequence &+= 1
        devices[device] = state
        if !ring.contains(device) { ring.append(device) }
        return .queued
    }

    /// The transport can take `count` more writes without response for `device`.
    public mutating func creditsAvailable(device: DeviceID, count: Int) {
        guard count > 0 else { return }
        var state = devices[device] ?? OutgoingDeviceQueues(configuration: configuration, options: OutgoingDeviceOptions())
        state.credits = min(configuration.maxCredits, state.credits + min(count, configuration.maxCredits))
        devices[device] = state
    }

    /// A write with response to `device` was answered or failed; frees its in-flight place.
    public mutating func writeCompleted(device: DeviceID) {
        guard let inFlight = devices[device]?.inFlight, inFlight > 0 else { return }
        devices[device]?.inFlight = inFlight - 1
    }

    // MARK: - Scheduling

    /// The next write to perform, or nil if nothing can be sent now (all queues empty, or every
    /// device with work is waiting for credits or for a response).
    public mutating func nextWrite() -> OutgoingScheduledWrite? {
        guard ring.contains(where: { devices[$0]?.nextClass(configuration: configuration) != nil }) else { return nil }
        // Terminates: some device can send, and each of its turns adds a quantum to its deficit
        // until its head write fits.
        while !ring.isEmpty {
            if cursor >= ring.count { cursor = 0 }
            let device = ring[cursor]
            guard var state = devices[device], !state.isEmpty else {
                leaveRing(at: cursor)
                continue
            }
            guard let qos = state.nextClass(configuration: configuration),
                  let head = state.queues[qos.rawValue].first
            else {
                endTurn(of: device)
                continue
            }
            if !turnOpen {
                state.deficit += configuration.quantum
                turnOpen = true
            }
            guard head.cost <= state.deficit, let write = state.take(qos, configuration: configuration) else {
                devices[device] = state
                endTurn(of: device)
                continue
            }
            devices[device] = state
            if state.isEmpty { leaveRing(at: cursor) }
            return OutgoingScheduledWrite(
                device: device, characteristic: write.characteristic, bytes: write.bytes,
                qos: qos, writeType: write.writeType, sequence: write.sequence
            )
        }
        return nil
    }

    // MARK: - Inspection

    public func queueDepth(device: DeviceID, qos: OutgoingQoS) -> Int {
        devices[device]?.queues[qos.rawValue].count ?? 0
    }

    public func credits(device: DeviceID) -> Int { devices[device]?.credits ?? 0 }

    public func inFlight(device: DeviceID) -> Int { devices[device]?.inFlight ?? 0 }

    // MARK: - Private

    /// Moves on to the next device. The deficit carried into later turns is capped at one
    /// maximal write, which keeps every turn under `quantum + maxWriteSize` bytes.
    private mutating func endTurn(of device: DeviceID) {
        if let deficit = devices[device]?.deficit, deficit > configuration.maxWriteSize {
            devices[device]?.deficit = configuration.maxWriteSize
        }
        cursor += 1
        turnOpen = false
    }

    private mutating func removeFromRing(_ device: DeviceID) {
        guard let index = ring.firstIndex(of: device) else { return }
        if index < cursor {
            ring.remove(at: index)
            cursor -= 1
        } else {
            leaveRing(at: index)
        }
    }

    /// A device with nothing queued leaves the ring and forfeits its deficit (as in DRR). The
    /// cursor wraps at once, so a device that rejoins goes to the back of the ring rather than
    /// straight into another turn.
    private mutating func leaveRing(at index: Int) {
        devices[ring[index]]?.deficit = 0
        ring.remove(at: index)
        if index == cursor { turnOpen = false }
        if cursor >= ring.count { cursor = 0 }
    }
}

// MARK: -

/// Why the scheduler refused a write. The write is not queued; nothing else changes.
public enum OutgoingSchedulerError: Error, Hashable, Sendable {
    /// The device's queue for this class holds `depth` writes, its capacity.
    case queueFull(DeviceID, OutgoingQoS, depth: Int)
    /// The characteristic's flags do not allow the requested write type.
    case notWritable(OutgoingCharacteristic, OutgoingWriteMode)
    /// Longer than `OutgoingConfiguration.maxWriteSize`.
    case tooLarge(size: Int, limit: Int)
}

// MARK: -

/// A write the runtime should perform now. A `withResponse` write must be followed by
/// `OutgoingScheduler.writeCompleted(device:)` when the device answers (or the write fails).
public struct OutgoingScheduledWrite: Hashable, Sendable {
    public var device: DeviceID
    public var characteristic: OutgoingCharacteristic
    public var bytes: [UInt8]
    public var qos: OutgoingQoS
    public var writeType: OutgoingWriteType
    /// Increases by one for every write accepted by the scheduler, across all devices; for logs.
    public var sequence: UInt64

    public init(device: DeviceID, characteristic: OutgoingCharacteristic, bytes: [UInt8], qos: OutgoingQoS, writeType: OutgoingWriteType, sequence: UInt64) {
        self.device = device
        self.characteristic = characteristic
        self.bytes = bytes
        self.qos = qos
        self.writeType = writeType
        self.sequence = sequence
    }
}
