import FleetCore
import GATT

/// Carries out the fleet's GATT writes: FleetCore's `OutgoingScheduler` decides the order
/// (bounded queues per device and QoS, deficit round robin across devices), this actor performs
/// each write through the fleet's `GATTWriteChannel` (BlueZ) and reports its outcome back to the scheduler and the device.
///
/// Guarantees:
/// - Writes to one device go out in the order the scheduler released them: each device has one
///   lane that performs its writes one after another.
/// - Nothing is sent to a device that is not `ready`/`degraded`: its writes stay queued (within
///   their bounds) until the link is back.
/// - Writes without response are paced: a device holds at most `window` of them between the
///   scheduler and BlueZ (BlueZ itself applies no backpressure to WriteValue commands), so the
///   queues, not an unbounded pile of D-Bus calls, absorb a burst, and fairness holds.
/// - On the fd path (`AcquireWrite`, when the class asks for it and BlueZ offers it) a socket is
///   acquired once per link and characteristic, and dropped with the link.
actor WriteCoordinator {
    private struct Lane {
        let writes: AsyncStream<OutgoingScheduledWrite>.Continuation
        let task: Task<Void, Never>
        let useSocket: Bool
        var sockets: [String: WriteSocket] = [:]
    }

    private var scheduler = OutgoingScheduler()
    private let channel: any GATTWriteChannel
    private let clock: any MonotonicClock
    private let window: Int
    private var lanes: [DeviceID: Lane] = [:]
    private var counters: [DeviceID: WriteCounters] = [:]
    /// Each device's class `write` timeout: what bounds its `WriteValue` calls (with a margin).
    private var writeTimeouts: [DeviceID: Duration] = [:]
    /// Callers waiting for a write's outcome (`enqueueAndWait`), by the write's scheduler sequence.
    private var waiters: [UInt64: Waiter] = [:]
    private let report: @Sendable (DeviceID, DeviceEvent) async -> Void

    private struct Waiter {
        let device: DeviceID
        let reply: CheckedContinuation<Result<FleetWriteOutcome, FleetWriteError>, Never>
        /// Answers `timedOut` if nothing else did first; cancelled when the outcome is known.
        let timer: Task<Void, Never>
        /// Which wait this is: after a `replace`, a newer caller waits under the same sequence,
        /// and the replaced caller's timer (if it already fired) must not take its write back.
        let token: UInt64
    }

    private var nextWaiterToken: UInt64 = 0
    /// Waited-for writes handed to their lane whose wait ran out before the lane began them: the
    /// lane skips them (they were answered `timedOut`, never sent).
    private var withdrawnFromLanes: Set<UInt64> = []
    /// Writes a lane is performing now (they can no longer be taken back).
    private var performing: Set<UInt64> = []

    /// - Parameter report: feeds write outcomes to the device's actor (its write timer and
    ///   consecutive-failure count).
    init(channel: any GATTWriteChannel, clock: any MonotonicClock, window: Int = 2, report: @escaping @Sendable (DeviceID, DeviceEvent) async -> Void) {
        self.channel = channel
        self.clock = clock
        self.window = max(1, window)
        self.report = report
    }

    // MARK: - Devices

    /// Sets a device's queue bounds and coalescing from its class; until `linkReady`, its writes
    /// are only queued.
    func configure(_ device: DeviceID, options: OutgoingDeviceOptions, writeTimeout: Duration? = nil) {
        scheduler.configure(device: device, options: options)
        if let writeTimeout { writeTimeouts[device] = writeTimeout }
        if lanes[device] == nil { scheduler.linkLost(device: device) }
    }

    func linkReady(_ device: DeviceID, useSocket: Bool) {
        if lanes[device] == nil {
            let (writes, continuation) = AsyncStream<OutgoingScheduledWrite>.makeStream()
            let task = Task { [weak self] in
                for await write in writes { await self?.perform(write) }
            }
            lanes[device] = Lane(writes: continuation, task: task, useSocket: useSocket)
            scheduler.linkEstablished(device: device)
            scheduler.creditsAvailable(device: device, count: window)
        }
        pump()
    }

    func linkLost(_ device: DeviceID) {
        scheduler.linkLost(device: device)
        guard let lane = lanes.removeValue(forKey: device) else { return }
        lane.writes.finish()
        lane.task.cancel()
    }

    func remove(_ device: DeviceID) {
        linkLost(device)
        scheduler.removeDevice(device)
        counters[device] = nil
        writeTimeouts[device] = nil
        for (sequence, waiter) in waiters where waiter.device == device {
            resolve(sequence, .failure(.notSent(device, reason: "the device left the fleet before the write was sent")))
        }
    }

    func counters(for device: DeviceID) -> WriteCounters { counters[device] ?? WriteCounters() }

    func queueDepths(for device: DeviceID) -> [OutgoingQoS: Int] {
        Dictionary(uniqueKeysWithValues: OutgoingQoS.allCases.map { ($0, scheduler.queueDepth(device: device, qos: $0)) })
    }

    // MARK: - Writes

    /// Queues a write; it goes out when the device is ready and its turn comes.
    func enqueue(
        _ device: DeviceID, characteristic: String, bytes: [UInt8], qos: OutgoingQoS, mode: OutgoingWriteMode, replaceable: Bool
    ) async throws(FleetWriteError) -> OutgoingEnqueueResult {
        let write = try await outgoingWrite(device, characteristic: characteristic, bytes: bytes, qos: qos, mode: mode, replaceable: replaceable)
        let (result, _) = try accept(write, for: device)
        pump()
        return result
    }

    /// Queues a write and returns once its outcome is known: acknowledged by the device (with
    /// response), handed to bluetoothd (without response), or failed. A write still queued after
    /// `timeout` (the link is down, or the queue ahead of it is long) is taken back and answers
    /// `timedOut`: it will never be sent, so a caller that tries again writes once. One already
    /// handed to its lane is waited for (the class write timeout bounds it).
    ///
    /// A `replaceable` write may replace the value of a still-queued replaceable write to the same
    /// characteristic within the class's coalescing window: it then goes out as that write (and
    /// is answered by its outcome), and the caller of the replaced value is answered `replaced`.
    func enqueueAndWait(
        _ device: DeviceID, characteristic: String, bytes: [UInt8], qos: OutgoingQoS, mode: OutgoingWriteMode, replaceable: Bool,
        timeout: Duration
    ) async throws(FleetWriteError) -> FleetWriteOutcome {
        let write = try await outgoingWrite(
            device, characteristic: characteristic, bytes: bytes, qos: qos, mode: mode, replaceable: replaceable)
        let (result, appended) = try accept(write, for: device)
        // Coalesced: this value goes out as the queued write it replaced, whose caller is told.
        let sequence: UInt64
        if case .coalesced(let kept) = result {
            sequence = kept
            resolve(kept, .failure(.replaced(device)))
        } else {
            sequence = appended
        }
        nextWaiterToken += 1
        let token = nextWaiterToken
        let outcome = await withCheckedContinuation(isolation: self) { reply in
            let timer = Task { [weak self] in
                do { try await Task.sleep(for: timeout) } catch { return }
                await self?.giveUp(sequence, token: token, of: device, after: timeout)
            }
            waiters[sequence] = Waiter(device: device, reply: reply, timer: timer, token: token)
            pump()
        }
        return try outcome.get()
    }

    /// The write as the scheduler takes it, checked against the characteristic BlueZ shows.
    private func outgoingWrite(
        _ device: DeviceID, characteristic: String, bytes: [UInt8], qos: OutgoingQoS, mode: OutgoingWriteMode, replaceable: Bool
    ) async throws(FleetWriteError) -> OutgoingWrite {
        let uuid = BluetoothUUID(characteristic)?.description ?? characteristic.lowercased()
        guard let found = await channel.characteristic(uuid, of: device) else {
            throw .unknownCharacteristic(device, uuid)
        }
        var properties: OutgoingWriteProperties = []
        if !found.flags.isDisjoint(with: [.write, .authenticatedSignedWrites]) { properties.insert(.write) }
        if found.flags.contains(.writeWithoutResponse) { properties.insert(.writeWithoutResponse) }
        return OutgoingWrite(
            characteristic: OutgoingCharacteristic(id: uuid, properties: properties), bytes: bytes, qos: qos, mode: mode,
            isReplaceable: replaceable)
    }

    /// Hands the write to the scheduler (no suspension between reading the sequence it will get
    /// and its append, so the sequence is this write's).
    private func accept(_ write: OutgoingWrite, for device: DeviceID) throws(FleetWriteError) -> (OutgoingEnqueueResult, UInt64) {
        let sequence = scheduler.upcomingSequence
        let result: OutgoingEnqueueResult
        do {
            result = try scheduler.enqueue(write, for: device, now: clock.now())
        } catch {
            switch error {
            case .queueFull(_, let qos, let depth):
                counters[device, default: WriteCounters()].refused += 1
                throw .queueFull(device, qos, depth: depth)
            case .tooLarge(let size, let limit): throw .tooLarge(size: size, limit: limit)
            case .notWritable: throw .notWritable(device, write.characteristic.id)
            }
        }
        var deviceCounters = counters[device] ?? WriteCounters()
        if result.wasCoalesced { deviceCounters.coalesced += 1 }
        let depth = scheduler.queueDepth(device: device, qos: write.qos)
        deviceCounters.highWater[write.qos.description] = max(deviceCounters.highWater[write.qos.description] ?? 0, depth)
        counters[device] = deviceCounters
        return (result, sequence)
    }

    /// A waited-for write whose wait ran out: withdrawn if still queued, or skipped by its lane
    /// if handed to it but not begun, and answered `timedOut` (never sent); one being performed
    /// answers when its outcome is known (its class timeout bounds it).
    private func giveUp(_ sequence: UInt64, token: UInt64, of device: DeviceID, after timeout: Duration) {
        guard waiters[sequence]?.token == token, !performing.contains(sequence) else { return }
        if !scheduler.withdraw(sequence: sequence, of: device) { withdrawnFromLanes.insert(sequence) }
        resolve(sequence, .failure(.timedOut(device, after: timeout)))
    }

    /// Answers the caller waiting for write `sequence`, if one still is.
    private func resolve(_ sequence: UInt64, _ outcome: Result<FleetWriteOutcome, FleetWriteError>) {
        guard let waiter = waiters.removeValue(forKey: sequence) else { return }
        waiter.timer.cancel()
        waiter.reply.resume(returning: outcome)
    }

    /// Hands every write the scheduler releases to its device's lane.
    private func pump() {
        while let write = scheduler.nextWrite() {
            guard let lane = lanes[write.device] else {
                // Released for a device whose lane just closed: give its pacing back.
                finishPacing(write)
                resolve(write.sequence, .failure(.notSent(write.device, reason: "the link was lost before the write was sent")))
                continue
            }
            lane.writes.yield(write)
        }
    }

    private func perform(_ write: OutgoingScheduledWrite) async {
        let device = write.device
        guard withdrawnFromLanes.remove(write.sequence) == nil else {
            // Its caller stopped waiting and was told it would not be sent.
            finishPacing(write)
            pump()
            return
        }
        guard let lane = lanes[device] else {
            resolve(write.sequence, .failure(.notSent(device, reason: "the link was lost before the write was sent")))
            return
        }
        performing.insert(write.sequence)
        defer { performing.remove(write.sequence) }
        var failure: DeviceEvent.Failure?
        var onSocket = false
        if lane.useSocket, write.writeType == .withoutResponse, let socket = await socket(device, uuid: write.characteristic.id) {
            onSocket = true
            if case .failure(let error) = await socket.send(write.bytes) {
                failure = DeviceEvent.Failure(.failed, message: "AcquireWrite socket: \(error)")
                lanes[device]?.sockets[write.characteristic.id] = nil
            }
        } else if let characteristic = await channel.characteristic(write.characteristic.id, of: device) {
            await report(device, .writeStarted)
            do {
                try await channel.writeValue(
                    write.bytes, to: characteristic, withResponse: write.writeType == .withResponse,
                    within: writeTimeouts[device] ?? DeviceStateMachine.Timeouts().write)
            } catch {
                failure = error
            }
            await report(device, failure.map { .writeFailed($0) } ?? .writeCompleted)
        } else {
            failure = DeviceEvent.Failure(.doesNotExist, message: "characteristic \(write.characteristic.id) is gone")
        }
        var deviceCounters = counters[device] ?? WriteCounters()
        if failure != nil {
            deviceCounters.failed += 1
        } else if write.writeType == .withResponse {
            deviceCounters.sentWithResponse += 1
        } else {
            deviceCounters.sentWithoutResponse += 1
            if onSocket { deviceCounters.sentOnSocket += 1 }
        }
        counters[device] = deviceCounters
        resolve(write.sequence, failure.map { .failure(.failed(device, $0)) } ?? .success(write.writeType == .withResponse ? .acknowledged : .sent))
        finishPacing(write)
        pump()
    }

    /// Returns the write's credit or in-flight place to the scheduler.
    private func finishPacing(_ write: OutgoingScheduledWrite) {
        switch write.writeType {
        case .withResponse: scheduler.writeCompleted(device: write.device)
        case .withoutResponse: if lanes[write.device] != nil { scheduler.creditsAvailable(device: write.device, count: 1) }
        }
    }

    /// The link's `AcquireWrite` socket for a characteristic, acquired on first use; nil when
    /// BlueZ does not offer one (the write then goes through WriteValue).
    private func socket(_ device: DeviceID, uuid: String) async -> WriteSocket? {
        if let socket = lanes[device]?.sockets[uuid] { return socket }
        guard let characteristic = await channel.characteristic(uuid, of: device),
            let acquired = await channel.acquireWrite(characteristic)
        else { return nil }
        let socket = WriteSocket(descriptor: acquired.descriptor, mtu: acquired.mtu, label: "write-\(device.address)")
        // The link may have dropped while acquiring: then the socket closes with this scope.
        guard lanes[device] != nil else { return nil }
        lanes[device]?.sockets[uuid] = socket
        return socket
    }
}

// MARK: -

/// One device's write figures, for status and metrics.
public struct WriteCounters: Sendable, Equatable {
    public var sentWithResponse = 0
    public var sentWithoutResponse = 0
    /// Of those, sent on an `AcquireWrite` socket.
    public var sentOnSocket = 0
    public var failed = 0
    /// Refused at enqueue because the queue was full.
    public var refused = 0
    public var coalesced = 0
    /// The deepest each QoS queue has been.
    public var highWater: [String: Int] = [:]

    public init() {}
}
