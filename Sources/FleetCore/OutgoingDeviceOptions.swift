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
