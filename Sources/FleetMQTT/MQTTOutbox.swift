/// One message for the broker.
public struct MQTTMessage: Sendable, Hashable {
    public var topic: String
    public var payload: [UInt8]
    /// 0 for values; 1 for retained state, discovery and command results.
    public var qos: Int32
    public var retain: Bool

    public init(topic: String, payload: [UInt8], qos: Int32, retain: Bool) {
        self.topic = topic
        self.payload = payload
        self.qos = qos
        self.retain = retain
    }

    public init(topic: String, text: String, qos: Int32, retain: Bool) {
        self.init(topic: topic, payload: Array(text.utf8), qos: qos, retain: retain)
    }
}

/// What waits for the broker, and what the broker should be holding. Pure: the client's loop
/// thread owns one behind a lock.
///
/// Two kinds of message with two policies:
/// - retained ones (gateway status, device state, discovery configs) are kept per topic, latest
///   wins: however long the broker is away, a device's state waits as one message, and
///   everything retained that was published is remembered (`retained`) so a reconnect can
///   publish it again (a broker restarted without persistence has lost it);
/// - the rest (values, command results) wait in arrival order, at most `capacity`; when full the
///   oldest is dropped and counted.
///
/// Guarantees: `waitingCount ≤ retained topics + capacity`; every enqueued non-retained message
/// is either taken or counted in `dropped`; an empty retained payload (a deletion) is remembered
/// like a state until libmosquitto accepts one for sending (`accepted`), so a deletion refused
/// (the connection was going) is published again on the next connection, and then forgotten.
public struct MQTTOutbox: Sendable {
    public let capacity: Int
    /// Latest retained message per topic that the broker should hold, and deletions not yet
    /// accepted for sending.
    public private(set) var retained: [String: MQTTMessage] = [:]
    /// Retained topics waiting to be published, in first-enqueued order; their payloads are in
    /// `retainedWaiting`.
    private var retainedOrder: [String] = []
    private var retainedWaiting: [String: MQTTMessage] = [:]
    /// Non-retained messages, oldest first (the value queue's ring: at most `capacity`).
    private var transient: MQTTValueQueue<MQTTMessage>
    public var transientCount: Int { transient.count }
    /// Non-retained messages dropped because the queue was full.
    public private(set) var dropped = 0

    public init(capacity: Int) {
        self.capacity = max(1, capacity)
        transient = MQTTValueQueue(capacity: self.capacity)
    }

    public var waitingCount: Int { retainedOrder.count + transientCount }
    /// Retained messages waiting.
    public var retainedWaitingCount: Int { retainedOrder.count }
    /// Non-retained messages waiting that are not QoS 0 values (command results).
    public private(set) var urgentWaiting = 0
    public var isEmpty: Bool { waitingCount == 0 }

    /// Queues `message`; returns true when an older non-retained message was dropped for it.
    @discardableResult
    public mutating func enqueue(_ message: MQTTMessage) -> Bool {
        if message.retain {
            retained[message.topic] = message
            if retainedWaiting.updateValue(message, forKey: message.topic) == nil { retainedOrder.append(message.topic) }
            return false
        }
        if message.qos > 0 { urgentWaiting += 1 }
        guard let oldest = transient.appendDroppingOldest(message) else { return false }
        if oldest.qos > 0 { urgentWaiting -= 1 }
        dropped += 1
        return true
    }

    /// Everything waiting, retained first (state before the values that follow it), then the
    /// rest oldest first; the outbox is empty afterwards.
    public mutating func takeAll() -> [MQTTMessage] {
        var out: [MQTTMessage] = []
        out.reserveCapacity(waitingCount)
        for topic in retainedOrder { if let message = retainedWaiting[topic] { out.append(message) } }
        retainedOrder.removeAll(keepingCapacity: true)
        retainedWaiting.removeAll(keepingCapacity: true)
        transient.takeAll(into: &out)
        urgentWaiting = 0
        return out
    }

    /// Puts `older` (taken by `takeAll` and not sent: the socket filled) back, ahead of what was
    /// queued since. A retained message goes back only when nothing newer for its topic was
    /// queued meanwhile (a newer state, or a deletion), so a full socket never brings back an
    /// old state or a deleted topic; the others keep their order ahead of newer ones, the oldest
    /// of all dropped beyond `capacity`. Returns how many non-retained messages were dropped.
    @discardableResult
    public mutating func putBack(_ older: ArraySlice<MQTTMessage>) -> Int {
        var olderRetained: [String] = []
        var olderTransient: [MQTTMessage] = []
        for message in older {
            if message.retain {
                guard retainedWaiting[message.topic] == nil else { continue }
                retainedWaiting[message.topic] = message
                olderRetained.append(message.topic)
            } else {
                olderTransient.append(message)
            }
        }
        retainedOrder.insert(contentsOf: olderRetained, at: 0)
        guard !olderTransient.isEmpty else { return 0 }
        let drop = transient.putBack(olderTransient[...])
        urgentWaiting = transient.count { $0.qos > 0 }
        dropped += drop
        return drop
    }

    /// libmosquitto accepted `message` for sending: a deletion is forgotten (unless the topic got
    /// a newer message since); a retained state stays, to be published again on a reconnect.
    public mutating func accepted(_ message: MQTTMessage) {
        guard message.retain, message.payload.isEmpty, retained[message.topic] == message else { return }
        retained[message.topic] = nil
    }

    /// Forgets the retained messages of `topics` without publishing anything: another publisher
    /// (the gateway that owns a device now) writes them, and a reconnect must not bring this
    /// one's old copies back.
    public mutating func forgetRetained(_ topics: [String]) {
        for topic in topics {
            retained[topic] = nil
            if retainedWaiting.removeValue(forKey: topic) != nil { retainedOrder.removeAll { $0 == topic } }
        }
    }

    /// Queues every retained message again (after a reconnect), or only those under `prefix`
    /// (discovery, when Home Assistant comes back). Order is by topic, so it is reproducible.
    public mutating func requeueRetained(under prefix: String? = nil) {
        for topic in retained.keys.sorted() where prefix.map({ topic.hasPrefix($0) }) ?? true {
            if let message = retained[topic], retainedWaiting.updateValue(message, forKey: topic) == nil {
                retainedOrder.append(topic)
            }
        }
    }
}
