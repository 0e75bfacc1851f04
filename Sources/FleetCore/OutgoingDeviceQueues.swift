/// One device's share of the scheduler: its queues per class, pacing state and round-robin
/// deficit. Internal to `OutgoingScheduler`.
struct OutgoingDeviceQueues: Sendable {
    var queues: [WriteQueue<OutgoingQueuedWrite>]
    var options: OutgoingDeviceOptions
    var credits = 0
    var inFlight = 0
    var deficit = 0
    /// False between `linkLost` and `linkEstablished`: nothing is sent, writes stay queued.
    var linked = true
    /// Per class: how many times in a row a higher class was served while this one could send.
    var passedOver: [Int]

    init(configuration: OutgoingConfiguration, options: OutgoingDeviceOptions) {
        queues = OutgoingQoS.allCases.map { WriteQueue(capacity: options.capacity(for: $0, configuration: configuration)) }
        passedOver = OutgoingQoS.allCases.map { _ in 0 }
        self.options = options
    }

    var isEmpty: Bool { queues.allSatisfy(\.isEmpty) }
    var queuedCount: Int { queues.reduce(0) { $0 + $1.count } }

    func canSend(_ write: OutgoingQueuedWrite, configuration: OutgoingConfiguration) -> Bool {
        guard linked else { return false }
        switch write.writeType {
        case .withoutResponse: return credits > 0
        case .withResponse: return inFlight < (options.maxInFlightWithResponse ?? configuration.maxInFlightWithResponse)
        }
    }

    /// The class to serve next: the highest with a sendable head, unless some class has been
    /// passed over `starvationLimit` times; then the one passed over most (higher class on a tie).
    /// Serving the most-passed-over starving class, not merely the highest, is what keeps bulk
    /// from starving when control and normal take turns at being "starving" (limit 1).
    func nextClass(configuration: OutgoingConfiguration) -> OutgoingQoS? {
        let sendable = OutgoingQoS.allCases.filter { qos in
            queues[qos.rawValue].first.map { canSend($0, configuration: configuration) } ?? false
        }
        let starving = sendable.filter { passedOver[$0.rawValue] >= configuration.starvationLimit }
        let longestWaiting = starving.max { lhs, rhs in
            passedOver[lhs.rawValue] != passedOver[rhs.rawValue]
                ? passedOver[lhs.rawValue] < passedOver[rhs.rawValue]
                : lhs > rhs
        }
        return longestWaiting ?? sendable.first
    }

    /// Removes the head of `qos` and updates pacing and starvation counters.
    mutating func take(_ qos: OutgoingQoS, configuration: OutgoingConfiguration) -> OutgoingQueuedWrite? {
        let others = OutgoingQoS.allCases.filter { other in
            other != qos && (queues[other.rawValue].first.map { canSend($0, configuration: configuration) } ?? false)
        }
        guard let write = queues[qos.rawValue].removeFirst() else { return nil }
        for other in others { passedOver[other.rawValue] += 1 }
        passedOver[qos.rawValue] = 0
        switch write.writeType {
        case .withoutResponse: credits -= 1
        case .withResponse: inFlight += 1
        }
        deficit -= write.cost
        return write
    }
}
