@testable import FleetMQTT
import PropertyBased
import Testing

@Suite struct MQTTValueQueueTests {
    @Test func aFullQueueDropsTheOldest() {
        var queue = MQTTValueQueue<Int>(capacity: 3)
        let dropped = (1...5).filter { queue.append($0) }.count
        #expect(dropped == 2)
        var taken: [Int] = []
        queue.takeAll(into: &taken)
        #expect(taken == [3, 4, 5])
        #expect(queue.isEmpty)
    }

    @Test func valuesPutBackComeBeforeThoseThatArrivedSince() {
        var queue = MQTTValueQueue<Int>(capacity: 4)
        queue.append(3)
        queue.append(4)
        #expect(queue.putBack([1, 2]) == 0)
        var taken: [Int] = []
        queue.takeAll(into: &taken)
        #expect(taken == [1, 2, 3, 4])
    }

    @Test func puttingBackBeyondCapacityDropsTheOldestOfAll() {
        var queue = MQTTValueQueue<Int>(capacity: 3)
        queue.append(4)
        queue.append(5)
        #expect(queue.putBack([1, 2, 3]) == 2)
        var taken: [Int] = []
        queue.takeAll(into: &taken)
        #expect(taken == [3, 4, 5])
    }

    /// Whatever the sequence of appends, hand-overs and put-backs: never more than capacity wait,
    /// what is taken is in order with nothing repeated, and every value is taken or counted dropped.
    @Test func valuesAreBoundedOrderedAndAccountedFor() async {
        await propertyCheck(input: Gen.int(in: 1...8), Gen.int(in: 0...5).array(of: 0...80)) { capacity, operations in
            var queue = MQTTValueQueue<Int>(capacity: capacity)
            var next = 0
            var dropped = 0
            var sent: [Int] = []
            for operation in operations {
                switch operation {
                case 0, 1:
                    // A flush: some go out, the rest go back (the socket filled up).
                    var batch: [Int] = []
                    queue.takeAll(into: &batch)
                    let sending = operation == 0 ? batch.count : batch.count / 2
                    sent.append(contentsOf: batch.prefix(sending))
                    dropped += queue.putBack(batch[sending...])
                default:
                    next += 1
                    if queue.append(next) { dropped += 1 }
                }
                #expect(queue.count <= capacity)
            }
            var rest: [Int] = []
            queue.takeAll(into: &rest)
            sent.append(contentsOf: rest)
            #expect(sent == sent.sorted() && Set(sent).count == sent.count)
            #expect(sent.count + dropped == next)
        }
    }
}
