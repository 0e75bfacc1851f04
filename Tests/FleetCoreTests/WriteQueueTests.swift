import Testing
@testable import FleetCore

@Suite struct WriteQueueTests {
    @Test func dequeuesInTheOrderItemsWereQueued() {
        var queue = WriteQueue<Int>(capacity: 8)
        for value in 1...5 { _ = queue.append(value) }
        let drained = (0..<5).compactMap { _ in queue.removeFirst() }
        #expect(drained == [1, 2, 3, 4, 5])
    }

    @Test func refusesToGrowPastItsCapacity() {
        var queue = WriteQueue<Int>(capacity: 3)
        let accepted = (1...5).map { queue.append($0) }
        #expect(accepted == [true, true, true, false, false])
        #expect(queue.count == 3)
    }

    @Test func keepsOrderAcrossWrapAround() {
        var queue = WriteQueue<Int>(capacity: 4)
        var drained: [Int] = []
        for value in 0..<20 {
            _ = queue.append(value)
            if queue.count == 3, let first = queue.removeFirst() { drained.append(first) }
        }
        while let first = queue.removeFirst() { drained.append(first) }
        #expect(drained == Array(0..<20))
    }

    @Test func replacesTheNewestMatchingItem() {
        var queue = WriteQueue<Int>(capacity: 4)
        for value in [1, 2, 1] { _ = queue.append(value) }
        let replaced = queue.replaceLast(where: { $0 == 1 }, with: { $0 + 10 })
        #expect(replaced)
        #expect((0..<3).compactMap { _ in queue.removeFirst() } == [1, 2, 11])
    }

    @Test func aZeroCapacityQueueAcceptsNothing() {
        var queue = WriteQueue<Int>(capacity: 0)
        let accepted = queue.append(1)
        #expect(!accepted)
    }
}
