import FleetCore
import GATT
import Logging
import Synchronization

/// Where every characteristic value ends up, from either path (D-Bus `PropertiesChanged` or an
/// `AcquireNotify` socket): decoded with GATT's registry, counted per device, published.
///
/// Thread-safe and lock-light, because it runs on the thread that received the value (the bus
/// connection's or the socket poller's) for every notification: two short lock sections per
/// value, no string formatting (a device's last value is rendered only when someone asks).
/// Bad bytes from a device are counted and logged, never fatal.
public final class ValuePipeline: Sendable {
    /// One decoded (or undecodable) value.
    public struct Value: Sendable {
        public let device: DeviceID
        /// Lower-case 128-bit UUID as BlueZ reports it.
        public let characteristic: String
        public let result: Result<CharacteristicEvent, GATTDecodeError>
    }

    public struct DeviceCounters: Sendable, Equatable {
        public var notifications = 0
        public var decodeErrors = 0
        /// The last value that decoded.
        public var lastEvent: CharacteristicEvent?

        /// The last decoded value's one-line summary (`72 bpm, RR 812/799 ms`).
        public var lastSummary: String? { lastEvent?.summary }
    }

    private struct State {
        var counters: [DeviceID: DeviceCounters] = [:]
        var uuids: [String: BluetoothUUID] = [:]
        var observers: [@Sendable (Value) -> Void] = []
        var streams: [UInt64: AsyncStream<Value>.Continuation] = [:]
        var nextStream: UInt64 = 0
        var finished = false
        /// Event classes each device has produced, so the first of each is logged once.
        var classesSeen: [DeviceID: Set<String>] = [:]
    }

    private let state = Mutex(State())
    private let registry: CharacteristicRegistry
    private let logger: Logger
    private let buffer: Int

    public init(registry: CharacteristicRegistry = .standard, logger: Logger, buffer: Int = 4096) {
        self.registry = registry
        self.logger = logger
        self.buffer = buffer
    }

    /// A new stream of the decoded values from now on, newest kept when its consumer falls behind
    /// (`buffer` values: telemetry, not state). Each access is a consumer of its own; a stream
    /// ends when its iteration ends or the pipeline finishes. Nobody listening costs nothing.
    public var values: AsyncStream<Value> {
        let (stream, continuation) = AsyncStream<Value>.makeStream(bufferingPolicy: .bufferingNewest(buffer))
        let registered = state.withLock { state -> UInt64? in
            guard !state.finished else { return nil }
            state.nextStream += 1
            state.streams[state.nextStream] = continuation
            return state.nextStream
        }
        guard let id = registered else {
            continuation.finish()
            return stream
        }
        continuation.onTermination = { [weak self] _ in
            _ = self?.state.withLock { $0.streams.removeValue(forKey: id) }
        }
        return stream
    }

    /// Calls `observer` with every value from now on, inline on the receiving thread, before the
    /// value is published to the `values` streams. For consumers that must see every value at little cost
    /// (counters, metrics, latency probes): no task, no wake-up. The observer must be quick and
    /// must not block, and must not call back into the pipeline.
    public func observe(_ observer: @escaping @Sendable (Value) -> Void) {
        state.withLock { $0.observers.append(observer) }
    }

    public func ingest(device: DeviceID, characteristic: String, bytes: [UInt8]) {
        // Parsed once per characteristic; `parsed` is only set on a miss, so the second lock
        // section caches it without looking the string up again.
        let cached = state.withLock { $0.uuids[characteristic] }
        let parsed = cached == nil ? BluetoothUUID(characteristic) : nil
        let uuid = cached ?? parsed
        let result: Result<CharacteristicEvent, GATTDecodeError>
        if let uuid {
            do {
                result = .success(try registry.decode(bytes, from: uuid))
            } catch {
                result = .failure(error)
            }
        } else {
            result = .success(.raw(RawCharacteristicValue(uuid: .init(0), bytes: bytes)))
        }
        let (errors, firstOfClass, observers, streams) = state.withLock { state in
            if let parsed, state.uuids.count < 1024 { state.uuids[characteristic] = parsed }
            // Counted in place (inout through the subscript): no copy of the entry per value.
            let (errors, newClass) = Self.count(result, in: &state.counters[device, default: DeviceCounters()])
            var first = false
            if let newClass { first = state.classesSeen[device, default: []].insert(newClass).inserted }
            return (errors, first, state.observers, state.streams)
        }
        if case .success(let event) = result {
            // The first value of each class a device sends is worth a line in the journal; every
            // value is there at debug level.
            // The metadata is built only when the level is on (the arguments are autoclosures).
            func metadata() -> Logger.Metadata {
                [
                    "device_address": "\(device.address)", "characteristic": "\(characteristic)", "event": "\(event.name)",
                    "value": "\(event.summary)",
                ]
            }
            if firstOfClass {
                logger.info("first \(event.name) from device", metadata: metadata())
            } else {
                logger.debug("\(event.name)", metadata: metadata())
            }
        }
        if case .failure(let error) = result, errors & (errors - 1) == 0 {
            // Logged at 1, 2, 4, 8, … errors per device: visible without flooding the journal.
            logger.warning(
                "undecodable value from device",
                metadata: [
                    "device_address": "\(device.address)", "characteristic": "\(characteristic)",
                    "decode_error": "\(error)", "decode_errors": "\(errors)",
                ])
        }
        guard !observers.isEmpty || !streams.isEmpty else { return }
        let value = Value(device: device, characteristic: characteristic, result: result)
        for observer in observers { observer(value) }
        for (_, stream) in streams { stream.yield(value) }
    }

    /// Counts one value; returns the device's decode errors so far, and the value's event class
    /// when it differs from the previous value's (only then can it be the first of its class).
    private static func count(
        _ result: Result<CharacteristicEvent, GATTDecodeError>, in counters: inout DeviceCounters
    ) -> (errors: Int, newClass: String?) {
        counters.notifications += 1
        var newClass: String?
        switch result {
        case .success(let event):
            if counters.lastEvent?.name != event.name { newClass = event.name }
            counters.lastEvent = event
        case .failure: counters.decodeErrors += 1
        }
        return (counters.decodeErrors, newClass)
    }

    public func counters(for device: DeviceID) -> DeviceCounters {
        state.withLock { $0.counters[device] ?? DeviceCounters() }
    }

    /// Ends every stream of `values` (the daemon is stopping).
    public func finish() {
        let streams = state.withLock { state -> [AsyncStream<Value>.Continuation] in
            state.finished = true
            defer { state.streams.removeAll() }
            return Array(state.streams.values)
        }
        for stream in streams { stream.finish() }
    }
}
