import FleetCore
import GATT
import Logging
import Synchronization

/// Where every characteristic value ends up, from either path (D-Bus `PropertiesChanged` or an
/// `AcquireNotify` socket): decoded with GATT's registry, counted per device, published.
///
/// Thread-safe and lock-light, because the fd path calls it from the poller thread for every
/// notification. Bad bytes from a device are counted and logged, never fatal.
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
        public var lastSummary: String?
    }

    private struct State {
        var counters: [DeviceID: DeviceCounters] = [:]
        var uuids: [String: BluetoothUUID] = [:]
        /// Event classes each device has produced, so the first of each is logged once.
        var classesSeen: [DeviceID: Set<String>] = [:]
    }

    private let state = Mutex(State())
    private let registry: CharacteristicRegistry
    private let logger: Logger
    private let sink: AsyncStream<Value>.Continuation
    /// Decoded values, newest kept when a consumer falls behind (telemetry, not state).
    public let values: AsyncStream<Value>

    public init(registry: CharacteristicRegistry = .standard, logger: Logger, buffer: Int = 4096) {
        self.registry = registry
        self.logger = logger
        (values, sink) = AsyncStream<Value>.makeStream(bufferingPolicy: .bufferingNewest(buffer))
    }

    public func ingest(device: DeviceID, characteristic: String, bytes: [UInt8]) {
        let uuid = state.withLock { state -> BluetoothUUID? in
            if let known = state.uuids[characteristic] { return known }
            let parsed = BluetoothUUID(characteristic)
            if let parsed, state.uuids.count < 1024 { state.uuids[characteristic] = parsed }
            return parsed
        }
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
        let (errors, firstOfClass) = state.withLock { state -> (Int, Bool) in
            var counters = state.counters[device, default: DeviceCounters()]
            counters.notifications += 1
            var first = false
            switch result {
            case .success(let event):
                counters.lastSummary = event.summary
                first = state.classesSeen[device, default: []].insert(event.name).inserted
            case .failure: counters.decodeErrors += 1
            }
            state.counters[device] = counters
            return (counters.decodeErrors, first)
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
        sink.yield(Value(device: device, characteristic: characteristic, result: result))
    }

    public func counters(for device: DeviceID) -> DeviceCounters {
        state.withLock { $0.counters[device] ?? DeviceCounters() }
    }

    public func finish() { sink.finish() }
}
