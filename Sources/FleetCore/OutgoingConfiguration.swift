/// Limits of the outgoing scheduler. All bounds are per device.
public struct OutgoingConfiguration: Hashable, Sendable {
    public var controlQueueCapacity: Int
    public var normalQueueCapacity: Int
    public var bulkQueueCapacity: Int
    /// Bytes a device may send per round-robin turn (deficit round robin quantum).
    public var quantum: Int
    /// Outstanding writes with response; ATT allows one request at a time per bearer.
    public var maxInFlightWithResponse: Int
    /// Credits for writes without response are capped here, so a transport that over-reports
    /// readiness cannot build up an unbounded burst.
    public var maxCredits: Int
    /// Largest single write; 512 is ATT's maximum attribute value length.
    public var maxWriteSize: Int
    /// Once a class with a sendable write has been passed over this many times for other classes
    /// of the same device, it is served within two more writes of that device (three classes),
    /// however busy control and normal are.
    public var starvationLimit: Int

    public init(
        controlQueueCapacity: Int = 16,
        normalQueueCapacity: Int = 64,
        bulkQueueCapacity: Int = 256,
        quantum: Int = 512,
        maxInFlightWithResponse: Int = 1,
        maxCredits: Int = 64,
        maxWriteSize: Int = 512,
        starvationLimit: Int = 8
    ) {
        self.controlQueueCapacity = max(0, controlQueueCapacity)
        self.normalQueueCapacity = max(0, normalQueueCapacity)
        self.bulkQueueCapacity = max(0, bulkQueueCapacity)
        self.quantum = max(1, quantum)
        self.maxInFlightWithResponse = max(1, maxInFlightWithResponse)
        self.maxCredits = max(1, maxCredits)
        self.maxWriteSize = max(1, maxWriteSize)
        self.starvationLimit = max(1, starvationLimit)
    }

    public func capacity(for qos: OutgoingQoS) -> Int {
        switch qos {
        case .control: controlQueueCapacity
        case .normal: normalQueueCapacity
        case .bulk: bulkQueueCapacity
        }
    }
}

// MARK: -

/// Per-device scheduling options, chosen by the runtime from the device's class.
public struct OutgoingDeviceOptions: Hashable, Sendable {
    /// When set, a replaceable (`OutgoingWrite.isReplaceable`) `normal` or `bulk` write replaces
    /// the value of a replaceable write to the same characteristic (same class and write type)
    /// that is still queued and was first queued less than this long ago. The replaced write keeps its place in the queue, so
    /// coalescing never delays a value; it only drops values nobody will read. `control` writes
    /// are never coalesced.
    public var coalescingWindow: Duration?
    /// Queue bounds of this device by class; a class not listed uses the scheduler's bound.
    public var queueCapacities: [OutgoingQoS: Int]
    /// Writes with response outstanding at once for this device; nil uses the scheduler's limit.
    public var maxInFlightWithResponse: Int?

    public init(
        coalescingWindow: Duration? = nil, queueCapacities: [OutgoingQoS: Int] = [:], maxInFlightWithResponse: Int? = nil
    ) {
        self.coalescingWindow = coalescingWindow
        self.queueCapacities = queueCapacities
        self.maxInFlightWithResponse = maxInFlightWithResponse.map { max(1, $0) }
    }

    func capacity(for qos: OutgoingQoS, configuration: OutgoingConfiguration) -> Int {
        queueCapacities[qos].map { max(0, $0) } ?? configuration.capacity(for: qos)
    }
}
