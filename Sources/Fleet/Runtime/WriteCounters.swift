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
