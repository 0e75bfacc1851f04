import Synchronization

/// The client's figures, readable from any thread (the metrics endpoint reads them).
public final class MQTTClientCounters: Sendable {
    private let connectedFlag = Atomic<Bool>(false)
    private let publishedCount = Atomic<Int>(0)
    private let droppedCount = Atomic<Int>(0)
    private let reconnectCount = Atomic<Int>(0)

    public init() {}

    /// Whether the broker accepted the current connection (CONNACK success).
    public var connected: Bool { connectedFlag.load(ordering: .relaxed) }
    /// Messages handed to libmosquitto for sending (QoS 0 values included).
    public var published: Int { publishedCount.load(ordering: .relaxed) }
    /// Non-retained messages dropped: the queue was full while the broker was away, or
    /// libmosquitto refused them.
    public var dropped: Int { droppedCount.load(ordering: .relaxed) }
    /// Connection attempts after the first (each one the broker was away for).
    public var reconnects: Int { reconnectCount.load(ordering: .relaxed) }

    func setConnected(_ value: Bool) { connectedFlag.store(value, ordering: .relaxed) }
    func addPublished(_ count: Int) { publishedCount.add(count, ordering: .relaxed) }
    func addDropped(_ count: Int) { droppedCount.add(count, ordering: .relaxed) }
    func addReconnect() { reconnectCount.add(1, ordering: .relaxed) }
}
