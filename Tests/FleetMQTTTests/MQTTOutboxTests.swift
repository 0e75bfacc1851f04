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

    @Test func aReconnectRequeuesEverythingRetainedButNotAcceptedDeletions() {
        var outbox = MQTTOutbox(capacity: 2)
        outbox.enqueue(state("A", "ready"))
        outbox.enqueue(MQTTMessage(topic: "homeassistant/sensor/x/config", text: "{}", qos: 1, retain: true))
        _ = outbox.takeAll()
        outbox.enqueue(MQTTMessage(topic: "homeassistant/sensor/x/config", payload: [], qos: 1, retain: true))
        let deletion = outbox.takeAll()
        #expect(deletion.count == 1)
        deletion.forEach { outbox.accepted($0) }
        outbox.requeueRetained()
        #expect(outbox.takeAll().map(\.topic) == ["wearfleet/device/A/state"])
    }

    /// A deletion libmosquitto refused (the connection was going) is published again on the
    /// next connection, until one is accepted; a newer state for the topic is never forgotten
    /// by the acceptance of an older deletion.
    @Test func aRefusedDeletionIsRepublishedUntilAccepted() {
        let topic = "homeassistant/sensor/x/config"
        var outbox = MQTTOutbox(capacity: 2)
        outbox.enqueue(MQTTMessage(topic: topic, text: "{}", qos: 1, retain: true))
        _ = outbox.takeAll()
        outbox.enqueue(MQTTMessage(topic: topic, payload: [], qos: 1, retain: true))
        _ = outbox.takeAll()  // refused: not accepted
        outbox.requeueRetained()
        let again = outbox.takeAll()
        #expect(again.map(\.topic) == [topic] && again.allSatisfy { $0.payload.isEmpty })
        outbox.enqueue(MQTTMessage(topic: topic, text: "{\"new\":1}", qos: 1, retain: true))
        again.forEach { outbox.accepted($0) }
        _ = outbox.takeAll()
        outbox.requeueRetained()
        #expect(outbox.takeAll().map { String(decoding: $0.payload, as: UTF8.self) } == ["{\"new\":1}"])
        outbox.enqueue(MQTTMessage(topic: topic, payload: [], qos: 1, retain: true))
        outbox.takeAll().forEach { outbox.accepted($0) }
        outbox.requeueRetained()
        #expect(outbox.isEmpty)
    }

    @Test func requeueUnderAPrefixTakesOnlyThoseTopics() {
        var outbox = MQTTOutbox(capacity: 2)
        outbox.enqueue(state("A", "ready"))
        outbox.enqueue(MQTTMessage(topic: "homeassistant/sensor/x/config", text: "{}", qos: 1, retain: true))
        _ = outbox.takeAll()
        outbox.requeueRetained(under: "homeassistant/")
        #expect(outbox.takeAll().map(\.topic) == ["homeassistant/sensor/x/config"])
    }

    /// The socket filled while a batch was being handed over: what goes back must not replace a
    /// state queued since, nor bring back a topic deleted since.
    @Test func puttingBackKeepsNewerStateAndDeletions() {
        var outbox = MQTTOutbox(capacity: 4)
        outbox.enqueue(state("A", "connecting"))
        outbox.enqueue(state("B", "idle"))
        outbox.enqueue(state("C", "idle"))
        outbox.enqueue(value(1))
        let batch = outbox.takeAll()
        outbox.enqueue(state("A", "ready"))
        outbox.enqueue(MQTTMessage(topic: "wearfleet/device/B/state", payload: [], qos: 1, retain: true))
        outbox.enqueue(value(2))
        #expect(outbox.putBack(batch[0...]) == 0)
        let taken = outbox.takeAll().map { "\($0.topic)=\(String(decoding: $0.payload, as: UTF8.self))" }
        #expect(taken == [
            "wearfleet/device/C/state=idle", "wearfleet/device/A/state=ready", "wearfleet/device/B/state=",
            "v=1", "v=2",
        ])
    }

    /// Whatever interleaving of taking, queuing and putting back part of a batch: the latest
    /// retained message per topic is what waits (or went out), and values keep their order
    /// with the oldest dropped and counted.
    @Test func puttingBackNeverReordersOrResurrects() async {
        await propertyCheck(input: Gen.int(in: 1...6), Gen.int(in: 0...5).array(of: 0...60)) { capacity, operations in
            var outbox = MQTTOutbox(capacity: capacity)
            var latest: [String: MQTTMessage] = [:]
            var sentLast: [String: MQTTMessage] = [:]
            var sentValues: [Int] = []
            var enqueued = 0
            var batch: [MQTTMessage] = []
            var sending = 0
            func send(_ messages: ArraySlice<MQTTMessage>) {
                for message in messages {
                    if message.retain { sentLast[message.topic] = message } else { sentValues.append(Int(String(decoding: message.payload, as: UTF8.self)) ?? -1) }
                }
            }
            for (step, operation) in operations.enumerated() {
                switch operation {
                case 0:
                    send(batch[..<min(sending, batch.count)])
                    outbox.putBack(batch[min(sending, batch.count)...])
                    batch = outbox.takeAll()
                    sending = step % (batch.count + 1)
                case 1, 2:
                    let topic = "wearfleet/device/D\(step % 3)/state"
                    let message = MQTTMessage(topic: topic, payload: operation == 1 ? Array("s\(step)".utf8) : [], qos: 1, retain: true)
                    latest[topic] = message
                    outbox.enqueue(message)
                default:
                    enqueued += 1
                    outbox.enqueue(value(enqueued))
                }
            }
            send(batch[..<min(sending, batch.count)])
            outbox.putBack(batch[min(sending, batch.count)...])
            send(outbox.takeAll()[...])
            // The last word the broker got for each topic is the latest queued one.
            #expect(sentLast == latest)
            #expect(sentValues == sentValues.sorted())
            #expect(sentValues.count + outbox.dropped == enqueued)
        }
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
