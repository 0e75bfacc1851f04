import FleetCore
import FleetMQTT
import PropertyBased
import Testing

@Suite struct MQTTOutboxTests {
    private func value(_ n: Int) -> MQTTMessage { MQTTMessage(topic: "v", text: "\(n)", qos: 0, retain: false) }
    private func state(_ device: String, _ text: String) -> MQTTMessage {
        MQTTMessage(topic: "wearfleet/device/\(device)/state", text: text, qos: 1, retain: true)
    }

    @Test func aFullQueueDropsTheOldestValueAndCountsIt() {
        var outbox = MQTTOutbox(capacity: 3)
        for n in 1...5 { outbox.enqueue(value(n)) }
        #expect(outbox.dropped == 2)
        #expect(outbox.takeAll().map { String(decoding: $0.payload, as: UTF8.self) } == ["3", "4", "5"])
        #expect(outbox.isEmpty)
    }

    @Test func retainedStateKeepsTheLatestPerTopicAndComesFirst() {
        var outbox = MQTTOutbox(capacity: 2)
        outbox.enqueue(value(1))
        outbox.enqueue(state("A", "connecting"))
        outbox.enqueue(state("B", "idle"))
        outbox.enqueue(state("A", "ready"))
        let taken = outbox.takeAll().map { "\($0.topic)=\(String(decoding: $0.payload, as: UTF8.self))" }
        #expect(taken == ["wearfleet/device/A/state=ready", "wearfleet/device/B/state=idle", "v=1"])
        #expect(outbox.dropped == 0)
    }

    @Test func aReconnectRequeuesEverythingRetainedButNotDeletions() {
        var outbox = MQTTOutbox(capacity: 2)
        outbox.enqueue(state("A", "ready"))
        outbox.enqueue(MQTTMessage(topic: "homeassistant/sensor/x/config", text: "{}", qos: 1, retain: true))
        _ = outbox.takeAll()
        outbox.enqueue(MQTTMessage(topic: "homeassistant/sensor/x/config", payload: [], qos: 1, retain: true))
        #expect(outbox.takeAll().count == 1)  // the deletion, once
        outbox.requeueRetained()
        #expect(outbox.takeAll().map(\.topic) == ["wearfleet/device/A/state"])
    }

    @Test func requeueUnderAPrefixTakesOnlyThoseTopics() {
        var outbox = MQTTOutbox(capacity: 2)
        outbox.enqueue(state("A", "ready"))
        outbox.enqueue(MQTTMessage(topic: "homeassistant/sensor/x/config", text: "{}", qos: 1, retain: true))
        _ = outbox.takeAll()
        outbox.requeueRetained(under: "homeassistant/")
        #expect(outbox.takeAll().map(\.topic) == ["homeassistant/sensor/x/config"])
    }

    /// Whatever the sequence: never more than capacity values wait, and every value is either
    /// taken or counted as dropped.
    @Test func valuesAreBoundedAndAccountedFor() async {
        await propertyCheck(input: Gen.int(in: 1...8), Gen.int(in: 0...4).array(of: 0...60)) { capacity, operations in
            var outbox = MQTTOutbox(capacity: capacity)
            var enqueued = 0
            var taken = 0
            var waiting: [MQTTMessage] = []
            for operation in operations {
                switch operation {
                case 0:
                    outbox.takeAll().forEach { if !$0.retain { taken += 1 } }
                    waiting.removeAll()
                case 1: outbox.enqueue(state("D\(enqueued % 3)", "s"))
                case 2:
                    // A command result: QoS 1, not retained.
                    enqueued += 1
                    let result = MQTTMessage(topic: "r", text: "\(enqueued)", qos: 1, retain: false)
                    outbox.enqueue(result)
                    waiting.append(result)
                default:
                    enqueued += 1
                    outbox.enqueue(value(enqueued))
                    waiting.append(value(enqueued))
                }
                if waiting.count > capacity { waiting.removeFirst(waiting.count - capacity) }
                #expect(outbox.transientCount <= capacity)
                #expect(outbox.waitingCount <= capacity + 3)
                // The urgent count (what must not wait for a linger) follows the queue exactly.
                #expect(outbox.urgentWaiting == waiting.filter { $0.qos > 0 }.count)
            }
            taken += outbox.takeAll().filter { !$0.retain }.count
            #expect(taken + outbox.dropped == enqueued)
        }
    }
}

@Suite struct MQTTReconnectScheduleTests {
    @Test func delaysGrowWithinTheBoundsAndResetOnConnect() async {
        await propertyCheck(input: Gen.uint64()) { seed in
            var random = SeededRandom(seed: seed)
            var schedule = MQTTReconnectSchedule(baseDelay: .milliseconds(500), maxDelay: .seconds(60))
            let now = MonotonicInstant(nanoseconds: 1_000_000_000)
            var previousUpper = Duration.zero
            for attempt in 1...20 {
                let delay = schedule.failed(at: now, random: &random).duration(since: now)
                #expect(delay >= .milliseconds(500) && delay <= .seconds(60))
                // Equal jitter: at least half of the nominal 0.5 s · 2^(n−1), capped.
                let nominal = min(Duration.milliseconds(500) * (1 << min(attempt - 1, 20)), .seconds(60))
                #expect(delay >= nominal / 2 && delay <= nominal)
                previousUpper = nominal
            }
            #expect(previousUpper == .seconds(60))
            schedule.connected()
            #expect(schedule.failed(at: now, random: &random).duration(since: now) <= .milliseconds(500))
        }
    }

    @Test func theSameSeedGivesTheSameDelays() {
        func delays(_ seed: UInt64) -> [Duration] {
            var random = SeededRandom(seed: seed)
            var schedule = MQTTReconnectSchedule()
            let now = MonotonicInstant(nanoseconds: 0)
            return (0..<8).map { _ in schedule.failed(at: now, random: &random).duration(since: now) }
        }
        #expect(delays(7) == delays(7))
        #expect(delays(7) != delays(8))
    }
}
