import FleetCore
import GATT

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

    /// Writes and answers once the outcome is known, within `budget`: `acknowledged` (with
    /// response, the device answered), `sent` (without response, handed to bluetoothd or the
    /// `AcquireWrite` socket), or a `FleetWriteError`. Refused before queuing (nothing changes)
    /// when the text is not a UUID, the device is unknown or has no usable link, or the
    /// characteristic, size or queue does not allow it. A write may wait for its turn (in the
    /// queue, or handed to the device's lane behind another) for what the budget, counted from
    /// the call, leaves once the class's `write` timeout and its 1 s margin are set aside (at
    /// least 3 s: the configuration bounds `write` to `Timeouts.maximumWrite`); one not begun
    /// then is taken back and answers `timedOut` (never sent), and one that began is over by the
    /// class timeout, so the answer always comes within the budget.
    ///
    /// `replaceable`: a later replaceable write to the same characteristic may replace this one's
    /// value while it is queued, within the class's `coalescing_window` (a set-point where only
    /// the newest value matters): the replaced caller is answered `replaced`, never sent.
    public func writeAndWait(
        _ id: DeviceID, characteristic text: String, bytes: [UInt8], qos: OutgoingQoS? = nil, mode: OutgoingWriteMode = .automatic,
        replaceable: Bool = false, budget: Duration = FleetOrchestrator.writeAnswerBudget
    ) async throws(FleetWriteError) -> FleetWriteOutcome {
        // The budget runs from the call: the wait for the fleet's answer below counts too.
        let deadline = clock.now().advanced(by: budget)
        guard let uuid = BluetoothUUID(text) else { throw .invalidCharacteristic(text) }
        guard case .writeSettings(let settings)? = await submit(.command(.prepareWrite(id))) else { throw .unknownDevice(id) }
        guard status(of: id)?.acceptsWrites == true else { throw .notConnected(id) }
        let performing = BlueZDeviceTransport.callTimeout(within: classWriteTimeout(of: id))
        return try await writes.enqueueAndWait(
            id, characteristic: uuid.description, bytes: bytes, qos: qos ?? settings.defaultQoS, mode: mode,
            replaceable: replaceable, timeout: max(deadline.duration(since: clock.now()) - performing, .zero))
    }

    /// How long a waited-for write (`writeAndWait`, D-Bus `Write`, the broker's `write`) may take
    /// from the call to the answer: under busctl's 25 s default and wearfleetctl's 30 s, so the
    /// caller always hears the outcome and never retries a write that may still go out.
    public static let writeAnswerBudget: Duration = .seconds(24)

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
    /// Not a Bluetooth UUID.
    case invalidCharacteristic(String)
    /// The device has no usable link now (a write that is waited for is not queued for later).
    case notConnected(DeviceID)
    /// Queued, then dropped unsent (the link was lost, or the device left the fleet).
    case notSent(DeviceID, reason: String)
    /// Sent, and bluetoothd or the device refused or failed it.
    case failed(DeviceID, DeviceEvent.Failure)
    /// Still queued when the caller stopped waiting: taken back, never sent.
    case timedOut(DeviceID, after: Duration)
    /// Its value was replaced by a newer replaceable write while queued (`coalescing_window`):
    /// never sent; the newer value went out in its place.
    case replaced(DeviceID)

    public var description: String {
        switch self {
        case .unknownDevice(let id): "\(id.address) is not a device of the fleet"
        case .unknownCharacteristic(let id, let uuid): "\(id.address) has no characteristic \(uuid)"
        case .notWritable(let id, let uuid): "characteristic \(uuid) of \(id.address) cannot be written that way"
        case .queueFull(let id, let qos, let depth): "the \(qos) write queue of \(id.address) is full (\(depth) writes)"
        case .tooLarge(let size, let limit): "a \(size)-byte write exceeds the \(limit)-byte limit"
        case .invalidCharacteristic(let text): "\(text) is not a Bluetooth UUID"
        case .notConnected(let id): "\(id.address) is not connected"
        case .notSent(let id, let reason): "the write to \(id.address) was not sent: \(reason)"
        case .failed(let id, let failure):
            "bluetoothd: the write to \(id.address) failed: \(failure.name)\(failure.message.isEmpty ? "" : ": \(failure.message)")"
        case .timedOut(let id, let after): "the write to \(id.address) was still queued after \(after); it was taken back and will not be sent"
        case .replaced(let id): "a newer value for the same characteristic of \(id.address) replaced this one while it was queued; it was not sent"
        }
    }
}

/// How a write that was waited for ended well.
public enum FleetWriteOutcome: Sendable, Hashable, CustomStringConvertible {
    /// With response: the device acknowledged it.
    case acknowledged
    /// Without response: handed to bluetoothd (or its `AcquireWrite` socket); the device does not answer.
    case sent

    public var description: String {
        switch self {
        case .acknowledged: "acknowledged"
        case .sent: "sent"
        }
    }
}
