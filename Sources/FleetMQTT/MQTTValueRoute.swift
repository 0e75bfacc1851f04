import Fleet
import FleetCore
import FoundationEssentials
import GATT
import Synchronization

/// The values' way to the broker, which never goes through the concurrency pool: the value
/// pipeline's tap (on the ingest thread) queues each value in the client's bounded queue
/// (`MQTTClient.publishValue`: a lock and an append, and an eventfd write only when the `mqtt`
/// thread sleeps), and the `mqtt` thread renders the values it takes (`MQTTValueRenderer`) and
/// hands them to libmosquitto. What the value JSON says of a device besides the value (session,
/// name, adapter) is what the bridge told the route last (`describe`); what the bridge must
/// learn from values (a new kind to announce, the battery level, Device Information) is handed
/// back to it (`notable`), as is each device's last value time (`lastValueTime`).
final class MQTTValueRoute: Sendable {
    /// What a device's values carry besides the value: the same as the watch clients' records.
    typealias DeviceContext = WatchHub.DeviceInfo

    struct Entry: Sendable {
        var context: DeviceContext
        /// Changes when the device is forgotten and known again, so the renderer hands its
        /// kinds to the bridge again (the bridge's record starts empty).
        var epoch: UInt64
    }

    private struct State: Sendable {
        var entries: [DeviceID: Entry] = [:]
        var nextEpoch: UInt64 = 1
        var lastValueTimes: [DeviceID: Date] = [:]
    }

    let topics: MQTTTopics
    private let state = Mutex(State())
    /// Values the bridge learns from (first of a kind per device, battery, Device Information);
    /// rare, so a stream (newest kept) costs nothing measurable.
    let notable: AsyncStream<ValuePipeline.Value>
    private let notableSink: AsyncStream<ValuePipeline.Value>.Continuation

    init(topics: MQTTTopics) {
        self.topics = topics
        (notable, notableSink) = AsyncStream<ValuePipeline.Value>.makeStream(bufferingPolicy: .bufferingNewest(4096))
    }

    // MARK: - The bridge's side

    /// Sets what `device`'s values carry from now on.
    func describe(_ device: DeviceID, _ context: DeviceContext) {
        state.withLock { state in
            if var entry = state.entries[device] {
                guard entry.context != context else { return }
                entry.context = context
                state.entries[device] = entry
            } else {
                state.entries[device] = Entry(context: context, epoch: state.nextEpoch)
                state.nextEpoch += 1
            }
        }
    }

    /// The device is gone: what the route knew of it too.
    func forget(_ device: DeviceID) {
        state.withLock { state in
            state.entries[device] = nil
            state.lastValueTimes[device] = nil
        }
    }

    /// When the daemon received the device's last value that went to the broker's queue.
    func lastValueTime(_ device: DeviceID) -> Date? {
        state.withLock { $0.lastValueTimes[device] }
    }

    /// Ends `notable` (the connection ends).
    func finish() {
        notableSink.finish()
    }

    // MARK: - The renderer's side (the `mqtt` thread)

    /// The devices' entries as they are now (a copy-on-write dictionary: taken once per batch).
    fileprivate var entries: [DeviceID: Entry] { state.withLock { $0.entries } }

    fileprivate func noteLastValueTimes(_ times: [DeviceID: Date]) {
        state.withLock { state in state.lastValueTimes.merge(times) { _, new in new } }
    }

    fileprivate func handOver(_ value: ValuePipeline.Value) {
        notableSink.yield(value)
    }

    /// Whether the bridge still describes `device` (it forgets a device before deleting its
    /// retained topics, so a copy checked under the outbox's lock either goes in before the
    /// deletion, which replaces it, or not at all).
    func describes(_ device: DeviceID) -> Bool {
        state.withLock { $0.entries[device] != nil }
    }
}

/// Turns values into messages on the `mqtt` thread: the value JSON (`LiveValueRecord`'s bytes,
/// written by the watch clients' encoder with its kept parts) on its topic, built once per
/// device, characteristic and kind.
struct MQTTValueRenderer {
    private struct TopicKey: Hashable {
        var device: DeviceID
        var characteristic: String
        var kind: String
    }

    let route: MQTTValueRoute
    /// A retained `…/<kind>/latest` copy, with its device (checked again when it is queued).
    struct LatestCopy {
        var device: DeviceID
        var message: MQTTMessage
    }
    /// Topics by key, with the epoch of the device's entry they were made under.
    private var topics: [TopicKey: (topic: String, epoch: UInt64)] = [:]
    private var lastValueTimes: [DeviceID: Date] = [:]
    private let encoder = LiveValueEncoder()

    init(route: MQTTValueRoute) {
        self.route = route
    }

    /// The messages of `values`, in order, one per value (the caller maps a message back to its
    /// value by position); `retained` gets the retained `…/<kind>/latest` copies of occasional
    /// measurements, for the client's outbox (its retained set: sent again on a reconnect,
    /// replaced by a deletion when the device goes), and only for a device the bridge still
    /// describes — a value rendered after its device was forgotten must not bring the topic back.
    mutating func render(
        _ values: some Collection<ValuePipeline.Value>, into messages: inout [MQTTMessage], retained: inout [LatestCopy]
    ) {
        guard !values.isEmpty else { return }
        let entries = route.entries
        messages.reserveCapacity(messages.count + values.count)
        for value in values {
            let entry = entries[value.device]
            let context = entry?.context
            let kind = LiveValueRecord.kind(of: value.result)
            let epoch = entry?.epoch ?? 0
            let key = TopicKey(device: value.device, characteristic: value.characteristic, kind: kind)
            let topic: String
            var notable = false
            if let known = topics[key], known.epoch == epoch {
                topic = known.topic
            } else {
                // The device's first value of this kind (since it was last known): the bridge
                // announces the sensor.
                topic = route.topics.value(value.device, kind: kind, characteristic: value.characteristic)
                topics[key] = (topic, epoch)
                notable = true
            }
            if case .success(let event) = value.result {
                switch event {
                case .batteryLevel, .deviceInformation: notable = true
                default: break
                }
            }
            // Only for a device the bridge describes: one it forgot must not be learnt again (its
            // entities would come back in Home Assistant); one not yet described is handed over
            // with its next value of the kind, once described (a new epoch makes it notable).
            if notable, entry != nil { route.handOver(value) }
            let payload = encoder.encode(value, info: context)
            messages.append(MQTTMessage(topic: topic, payload: payload, qos: 0, retain: false))
            if entry != nil, MQTTTopics.occasionalKinds.contains(kind) {
                // Rare (one per measurement): kept by the broker as the device's latest, with
                // QoS 1; the burst a device delivers at a wake keeps only its newest there, every
                // one of them on the value topic.
                retained.append(LatestCopy(
                    device: value.device,
                    message: MQTTMessage(topic: route.topics.latestValue(value.device, kind: kind), payload: payload, qos: 1, retain: true)))
            }
            lastValueTimes[value.device] = value.receivedAt
        }
        route.noteLastValueTimes(lastValueTimes)
        lastValueTimes.removeAll(keepingCapacity: true)
        if topics.count > 65_536 { topics.removeAll() }  // forgotten devices' topics: rebuilt on demand
    }
}
