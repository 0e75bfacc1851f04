import FleetCore
import FoundationEssentials
import GATT
import Logging
import Synchronization

/// Where every characteristic value ends up, from either path (D-Bus `PropertiesChanged` or an
/// `AcquireNotify` socket): decoded with GATT's registry, counted per device, published.
///
/// Thread-safe and lock-light, because it runs on the thread that received the value (the bus
/// connection's or the socket poller's) for every notification. A characteristic's values come
/// in through its `Source`, which has the device, the parsed UUID and the decoder resolved once:
/// a value then costs the decoding, one lock of its device's counters and one of the
/// subscribers, no lookup and no string formatting (a device's last value is rendered only when
/// someone asks). Bad bytes from a device are counted and logged, never fatal.
public final class ValuePipeline: Sendable {
    /// One decoded (or undecodable) value.
    public struct Value: Sendable {
        /// Where it came from: one reference to an object the receiving thread has just used,
        /// rather than copies of the device's address and the UUID string, whose reference
        /// counts live in per-device memory that a notification would otherwise write to. The
        /// same object for every value of the characteristic: an outlet may key what it keeps
        /// per characteristic by its identity (holding it, so the identity is not reused).
        let source: Source
        public let result: Result<CharacteristicEvent, GATTDecodeError>
        /// The bytes as the device sent them.
        public let bytes: [UInt8]
        /// When the daemon received it (wall clock).
        public let receivedAt: Date

        fileprivate init(source: Source, result: consuming Result<CharacteristicEvent, GATTDecodeError>, bytes: consuming [UInt8]) {
            self.source = source
            self.result = result
            self.bytes = bytes
            receivedAt = Date()
        }

        public var device: DeviceID { source.device }
        /// Lower-case 128-bit UUID as BlueZ reports it.
        public var characteristic: String { source.characteristic }
    }

    /// What the journal names a device with on its value lines, besides its address (the fleet's
    /// event log keeps it current: `identify`).
    public struct JournalContext: Sendable, Hashable {
        public var name: String?
        public var adapter: AdapterID?
        /// The journal's `SESSION_ID` of the device's latest connection session.
        public var session: String?

        public init(name: String? = nil, adapter: AdapterID? = nil, session: String? = nil) {
            self.name = name
            self.adapter = adapter
            self.session = session
        }
    }

    public struct DeviceCounters: Sendable, Equatable {
        public var notifications = 0
        public var decodeErrors = 0
        /// The last value that decoded.
        public var lastEvent: CharacteristicEvent?
        /// When it arrived (wall clock): what shows a sleeping device's last measurement.
        public var lastEventAt: Date?

        /// The last decoded value's one-line summary (`72 bpm, RR 812/799 ms`).
        public var lastSummary: String? { lastEvent?.summary }
    }

    /// The values of one characteristic of one device. Made once per characteristic
    /// (`source(device:characteristic:)`) and kept by whoever delivers its values: the D-Bus
    /// path's route of the characteristic, the fd path's socket registration.
    public final class Source: Sendable {
        public let device: DeviceID
        /// Lower-case 128-bit UUID as BlueZ reports it.
        public let characteristic: String
        /// Nil when `characteristic` is not a UUID: its values are then passed on raw.
        private let uuid: BluetoothUUID?
        /// The registry's decoder for `uuid`; nil when it has none (values are passed on raw).
        private let decoder: CharacteristicRegistry.Decoder?
        private let record: DeviceRecord
        private let outlets: Outlets

        fileprivate init(device: DeviceID, characteristic: String, record: DeviceRecord, outlets: Outlets) {
            self.device = device
            self.characteristic = characteristic
            uuid = BluetoothUUID(characteristic)
            decoder = uuid.flatMap { outlets.registry.decoder(for: $0) }
            self.record = record
            self.outlets = outlets
        }

        /// Decodes, counts and publishes one value.
        public func receive(_ bytes: [UInt8]) {
            // The event is counted and logged before it becomes the published `Result`, not
            // taken back out of one: each copy of a `Result` goes through its generic value
            // witnesses (callgrind: ~0.4k instructions per value for two copies).
            let result: Result<CharacteristicEvent, GATTDecodeError>
            if let decoder {
                do throws(GATTDecodeError) {
                    result = .success(decoded(try decoder(bytes[...])))
                } catch {
                    outlets.journal.undecodable(
                        error, errors: record.countUndecodable(), device: device, characteristic: characteristic, context: record.journalContext)
                    result = .failure(error)
                }
            } else {
                result = .success(decoded(.raw(RawCharacteristicValue(uuid: uuid ?? .init(0), bytes: bytes))))
            }
            // `result` and `bytes` move into the value, which is built only when someone listens.
            outlets.publish(source: self, result: result, bytes: bytes)
        }

        /// Counts and logs a value that decoded.
        private func decoded(_ event: CharacteristicEvent) -> CharacteristicEvent {
            outlets.journal.decoded(
                event, first: record.countDecoded(event), device: device, characteristic: characteristic, context: record.journalContext)
            return event
        }
    }

    /// One device's counters, shared by the sources of its characteristics.
    fileprivate final class DeviceRecord: Sendable {
        private struct State {
            var counters = DeviceCounters()
            /// Event classes the device has produced, so the first of each is logged once.
            var classesSeen: Set<String> = []
            var journalContext = JournalContext()
        }

        private let state = Mutex(State())

        var counters: DeviceCounters { state.withLock { $0.counters } }

        /// Read only when a value line is written.
        var journalContext: JournalContext {
            get { state.withLock { $0.journalContext } }
            set { state.withLock { $0.journalContext = newValue } }
        }

        /// Counts a value that decoded; true when it is the first of its event class from this
        /// device.
        func countDecoded(_ event: CharacteristicEvent) -> Bool {
            let name = event.name
            return state.withLock { state in
                state.counters.notifications += 1
                // Only a value whose class differs from the previous one can be the first of its
                // class: the set is looked at only then.
                let newClass = state.counters.lastEvent?.name != name
                state.counters.lastEvent = event
                state.counters.lastEventAt = Date()
                return newClass && state.classesSeen.insert(name).inserted
            }
        }

        /// Counts a value that did not decode; returns the device's decode errors so far.
        func countUndecodable() -> Int {
            state.withLock { state in
                state.counters.notifications += 1
                state.counters.decodeErrors += 1
                return state.counters.decodeErrors
            }
        }
    }

    /// What every source shares: the registry, the journal's value log and the subscribers.
    fileprivate final class Outlets: Sendable {
        struct Subscribers {
            var observers: [@Sendable (Value) -> Void] = []
            /// Removable observers (the fleet's activity feeds), by the id `tap` returned.
            var taps: [UInt64: @Sendable (Value) -> Void] = [:]
            var streams: [UInt64: AsyncStream<Value>.Continuation] = [:]
            var nextStream: UInt64 = 0
            var finished = false
            /// Who gets each value, as `publish` reads it: rebuilt when a subscriber comes or
            /// goes (rarely), so that a value costs one lock and one retain; nil when nobody
            /// listens.
            var receivers: Receivers?

            mutating func changed() {
                receivers = observers.isEmpty && taps.isEmpty && streams.isEmpty
                    ? nil : Receivers(observers: observers + taps.sorted { $0.key < $1.key }.map(\.value), streams: Array(streams.values))
            }
        }

        final class Receivers: Sendable {
            let observers: [@Sendable (Value) -> Void]
            let streams: [AsyncStream<Value>.Continuation]

            init(observers: [@Sendable (Value) -> Void], streams: [AsyncStream<Value>.Continuation]) {
                self.observers = observers
                self.streams = streams
            }
        }

        let registry: CharacteristicRegistry
        /// The journal's consumer of noteworthy values.
        let journal: ValueLog
        let subscribers = Mutex(Subscribers())

        init(registry: CharacteristicRegistry, logger: Logger) {
            self.registry = registry
            journal = ValueLog(logger: logger)
        }

        func publish(source: Source, result: consuming Result<CharacteristicEvent, GATTDecodeError>, bytes: consuming [UInt8]) {
            guard let receivers = subscribers.withLock({ $0.receivers }) else { return }
            let value = Value(source: source, result: result, bytes: bytes)
            for observer in receivers.observers { observer(value) }
            for stream in receivers.streams { stream.yield(value) }
        }
    }

    private struct Index {
        var records: [DeviceID: DeviceRecord] = [:]
        /// By device, then characteristic, so forgetting a device touches only its own.
        var sources: [DeviceID: [String: Source]] = [:]
    }

    private let index = Mutex(Index())
    private let outlets: Outlets
    private let buffer: Int

    public init(registry: CharacteristicRegistry = .standard, logger: Logger, buffer: Int = 4096) {
        outlets = Outlets(registry: registry, logger: logger)
        self.buffer = buffer
    }

    /// The source of `characteristic`'s values from `device`: the same object for the same pair,
    /// so a deliverer may keep it or ask again.
    public func source(device: DeviceID, characteristic: String) -> Source {
        index.withLock { index in
            if let known = index.sources[device]?[characteristic] { return known }
            let record = index.records[device] ?? DeviceRecord()
            index.records[device] = record
            let source = Source(device: device, characteristic: characteristic, record: record, outlets: outlets)
            index.sources[device, default: [:]][characteristic] = source
            return source
        }
    }

    /// Decodes, counts and publishes one value: `source(device:characteristic:).receive(bytes)`,
    /// for values that arrive one at a time (as events) rather than from a kept source.
    public func ingest(device: DeviceID, characteristic: String, bytes: [UInt8]) {
        source(device: device, characteristic: characteristic).receive(bytes)
    }

    /// A new stream of the decoded values from now on, newest kept when its consumer falls behind
    /// (`buffer` values: telemetry, not state). Each access is a consumer of its own; a stream
    /// ends when its iteration ends or the pipeline finishes. Nobody listening costs nothing.
    public var values: AsyncStream<Value> {
        let (stream, continuation) = AsyncStream<Value>.makeStream(bufferingPolicy: .bufferingNewest(buffer))
        let registered = outlets.subscribers.withLock { subscribers -> UInt64? in
            guard !subscribers.finished else { return nil }
            subscribers.nextStream += 1
            subscribers.streams[subscribers.nextStream] = continuation
            subscribers.changed()
            return subscribers.nextStream
        }
        guard let id = registered else {
            continuation.finish()
            return stream
        }
        continuation.onTermination = { [weak outlets] _ in
            outlets?.subscribers.withLock { subscribers in
                subscribers.streams[id] = nil
                subscribers.changed()
            }
        }
        return stream
    }

    /// Calls `observer` with every value from now on, inline on the receiving thread, before the
    /// value is published to the `values` streams. For consumers that must see every value at little cost
    /// (counters, metrics, latency probes): no task, no wake-up. The observer must be quick and
    /// must not block, and must not call back into the pipeline.
    public func observe(_ observer: @escaping @Sendable (Value) -> Void) {
        outlets.subscribers.withLock { subscribers in
            subscribers.observers.append(observer)
            subscribers.changed()
        }
    }

    /// Like `observe`, until `untap` with the returned id.
    public func tap(_ observer: @escaping @Sendable (Value) -> Void) -> UInt64 {
        outlets.subscribers.withLock { subscribers in
            subscribers.nextStream += 1
            subscribers.taps[subscribers.nextStream] = observer
            subscribers.changed()
            return subscribers.nextStream
        }
    }

    public func untap(_ id: UInt64) {
        outlets.subscribers.withLock { subscribers in
            subscribers.taps[id] = nil
            subscribers.changed()
        }
    }

    /// Sets the name, adapter and session the device's value lines carry from now on.
    public func identify(_ device: DeviceID, as context: JournalContext) {
        let record = index.withLock { index in
            let record = index.records[device] ?? DeviceRecord()
            index.records[device] = record
            return record
        }
        record.journalContext = context
    }

    /// Forgets a device that left the fleet: its counters, journal fields and sources, so a fleet
    /// that sees thousands of passing devices (pool candidates, random addresses) keeps none of
    /// them. A source someone still holds goes on decoding and publishing; a later
    /// `source(device:characteristic:)` starts the device afresh.
    public func forget(_ device: DeviceID) {
        index.withLock { index in
            index.records[device] = nil
            index.sources[device] = nil
        }
    }

    /// How many devices the pipeline keeps counters for (what `forget` bounds).
    public var deviceCount: Int { index.withLock { $0.records.count } }

    public func counters(for device: DeviceID) -> DeviceCounters {
        index.withLock { $0.records[device] }?.counters ?? DeviceCounters()
    }

    /// Ends every stream of `values` (the daemon is stopping).
    public func finish() {
        let streams = outlets.subscribers.withLock { subscribers -> [AsyncStream<Value>.Continuation] in
            subscribers.finished = true
            defer {
                subscribers.streams.removeAll()
                subscribers.changed()
            }
            return Array(subscribers.streams.values)
        }
        for stream in streams { stream.finish() }
    }
}
