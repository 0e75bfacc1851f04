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

// MARK: -

/// A write waiting in a device's queue, with its write type already resolved.
struct OutgoingQueuedWrite: Hashable, Sendable {
    var characteristic: OutgoingCharacteristic
    var bytes: [UInt8]
    var writeType: OutgoingWriteType
    var isReplaceable: Bool
    /// When the write was first queued; coalescing replaces bytes but keeps this.
    var enqueuedAt: MonotonicInstant
    var sequence: UInt64

    /// What the write costs in the round robin: its length, and at least one so empty writes are
    /// not free.
    var cost: Int { max(1, bytes.count) }
}

// MARK: -

// A ring buffer, not an Array with removeFirst: dequeue must be O(1) for a queue that a busy
// device drains hundreds of times a second; storage grows lazily but never past the capacity.

/// A FIFO queue with a fixed capacity. `append` refuses rather than grows.
struct WriteQueue<Element> {
    private(set) var capacity: Int
    private var storage: [Element?]
    private var head = 0
    private(set) var count = 0

    init(capacity: Int) {
        self.capacity = max(0, capacity)
        storage = []
    }

    var isEmpty: Bool { count == 0 }
    var isFull: Bool { count >= capacity }

    var first: Element? { isEmpty ? nil : storage[head] }

    /// Appends unless full; returns whether it did.
    mutating func append(_ element: Element) -> Bool {
        guard count < capacity else { return false }
        if count == storage.count { grow() }
        storage[(head + count) % storage.count] = element
        count += 1
        return true
    }

    mutating func removeFirst() -> Element? {
        guard let element = first else { return nil }
        storage[head] = nil
        head = (head + 1) % storage.count
        count -= 1
        if count == 0 { head = 0 }
        return element
    }

    /// Replaces the newest element matching `predicate`, searching from the back; returns whether
    /// one was found.
    mutating func replaceLast(where predicate: (Element) -> Bool, with transform: (Element) -> Element) -> Bool {
        var offset = count - 1
        while offset >= 0 {
            let index = (head + offset) % storage.count
            if let element = storage[index], predicate(element) {
                storage[index] = transform(element)
                return true
            }
            offset -= 1
        }
        return false
    }

    /// Removes the first element matching `predicate`, keeping the others in order; returns
    /// whether one was found. O(count): for a caller giving up on one write, not a hot path.
    mutating func removeFirst(where predicate: (Element) -> Bool) -> Bool {
        var kept: [Element] = []
        var found = false
        for offset in 0..<count {
            guard let element = storage[(head + offset) % storage.count] else { continue }
            if !found, predicate(element) { found = true } else { kept.append(element) }
        }
        guard found else { return false }
        for offset in 0..<storage.count { storage[offset] = offset < kept.count ? kept[offset] : nil }
        head = 0
        count = kept.count
        return true
    }

    /// Changes the bound. Lowering it below `count` drops nothing: appends are refused until the
    /// queue has drained below the new bound.
    mutating func setCapacity(_ capacity: Int) {
        self.capacity = max(0, capacity)
    }

    /// Removes everything, returning how many elements were dropped.
    mutating func removeAll() -> Int {
        let dropped = count
        storage = []
        head = 0
        count = 0
        return dropped
    }

    /// Storage doubles up to the capacity, so idle devices with large limits cost little.
    /// Only called when full below capacity, so the new size always exceeds `count`.
    private mutating func grow() {
        let size = min(capacity, max(4, storage.count * 2))
        var items: [Element?] = []
        items.reserveCapacity(size)
        for offset in 0..<count { items.append(storage[(head + offset) % storage.count]) }
        items.append(contentsOf: repeatElement(nil, count: size - count))
        storage = items
        head = 0
    }
}

extension WriteQueue: Sendable where Element: Sendable {}
