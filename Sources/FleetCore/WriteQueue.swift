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
