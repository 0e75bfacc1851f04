/// Values waiting for the `mqtt` thread, oldest first, at most `capacity`: when full, the oldest
/// is dropped (and the caller counts it). Pure: the client keeps one behind its lock.
///
/// Guarantees: `count ≤ capacity`; every appended element is either taken (in append order,
/// elements put back ahead of later ones) or reported dropped exactly once.
struct MQTTValueQueue<Element: Sendable>: Sendable {
    let capacity: Int
    /// A ring over `slots`, `head` the oldest.
    private var slots: [Element?]
    private var head = 0
    private(set) var count = 0

    init(capacity: Int) {
        self.capacity = max(1, capacity)
        slots = Array(repeating: nil, count: self.capacity)
    }

    var isEmpty: Bool { count == 0 }

    /// Queues `element`; returns true when the oldest was dropped for it.
    @discardableResult
    mutating func append(_ element: Element) -> Bool { appendDroppingOldest(element) != nil }

    /// Queues `element`; returns the oldest when it was dropped for it.
    @discardableResult
    mutating func appendDroppingOldest(_ element: Element) -> Element? {
        var dropped: Element?
        if count == capacity {
            dropped = slots[head]
            slots[head] = nil
            head = (head + 1) % capacity
            count -= 1
        }
        slots[(head + count) % capacity] = element
        count += 1
        return dropped
    }

    /// How many of the waiting elements satisfy `predicate`.
    func count(where predicate: (Element) -> Bool) -> Int {
        (0..<count).reduce(0) { total, index in
            total + (slots[(head + index) % capacity].map(predicate) == true ? 1 : 0)
        }
    }

    /// Moves everything waiting, oldest first, to the end of `batch`; the queue is empty afterwards.
    mutating func takeAll(into batch: inout [Element]) {
        batch.reserveCapacity(batch.count + count)
        for index in 0..<count {
            let slot = (head + index) % capacity
            if let element = slots[slot] { batch.append(element) }
            slots[slot] = nil
        }
        head = 0
        count = 0
    }

    /// Puts `older` (taken earlier and not sent) back ahead of what arrived since, keeping order;
    /// beyond `capacity` the oldest of all are dropped. Returns how many were dropped.
    mutating func putBack(_ older: ArraySlice<Element>) -> Int {
        guard !older.isEmpty else { return 0 }
        var newer: [Element] = []
        takeAll(into: &newer)
        let total = older.count + newer.count
        let drop = max(0, total - capacity)
        for element in older.dropFirst(min(drop, older.count)) { append(element) }
        for element in newer.dropFirst(max(0, drop - older.count)) { append(element) }
        return drop
    }
}
