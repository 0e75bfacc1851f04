import Testing
import PropertyBased
import FleetCore

/// Random sequences of enqueues, credits, completions and picks, checked against a shadow model
/// of the queues after every step.
@Suite struct OutgoingSchedulerPropertyTests {
    static let characteristics = [
        OutgoingCharacteristic(id: "both", properties: [.write, .writeWithoutResponse]),
        OutgoingCharacteristic(id: "acked", properties: [.write]),
        OutgoingCharacteristic(id: "unacked", properties: [.writeWithoutResponse]),
    ]

    /// What the scheduler should hold, kept independently from its internals.
    struct Shadow {
        var queues: [DeviceID: [OutgoingQoS: [OutgoingScheduledWrite]]] = [:]

        func head(_ device: DeviceID, _ qos: OutgoingQoS) -> OutgoingScheduledWrite? { queues[device]?[qos]?.first }

        func isSendable(_ device: DeviceID, _ qos: OutgoingQoS, _ scheduler: OutgoingScheduler) -> Bool {
            guard let head = head(device, qos) else { return false }
            switch head.writeType {
            case .withoutResponse: return scheduler.credits(device: device) > 0
            case .withResponse: return scheduler.inFlight(device: device) < scheduler.configuration.maxInFlightWithResponse
            }
        }

        func isSendable(_ device: DeviceID, _ scheduler: OutgoingScheduler) -> Bool {
            OutgoingQoS.allCases.contains { isSendable(device, $0, scheduler) }
        }
    }

    struct Run {
        var scheduler: OutgoingScheduler
        var devices: [DeviceID]
        var rng: SeededRandom
        var shadow = Shadow()

        init(seed: UInt64) {
            var rng = SeededRandom(seed: seed)
            let configuration = OutgoingConfiguration(
                controlQueueCapacity: Int.random(in: 1...4, using: &rng),
                normalQueueCapacity: Int.random(in: 1...8, using: &rng),
                bulkQueueCapacity: Int.random(in: 1...8, using: &rng),
                quantum: Int.random(in: 1...64, using: &rng),
                maxInFlightWithResponse: Int.random(in: 1...3, using: &rng),
                maxCredits: Int.random(in: 1...16, using: &rng),
                maxWriteSize: Int.random(in: 1...64, using: &rng),
                starvationLimit: Int.random(in: 1...5, using: &rng)
            )
            scheduler = OutgoingScheduler(configuration: configuration)
            devices = (0..<Int.random(in: 1...5, using: &rng)).map(PoolFixture.device)
            self.rng = rng
        }

        /// One random operation; returns the write picked, if the operation was a pick.
        mutating func step() throws -> OutgoingScheduledWrite? {
            let device = devices.randomElement(using: &rng) ?? devices[0]
            let roll = Int.random(in: 0..<100, using: &rng)
            switch roll {
            case 0..<45:
                let qos = OutgoingQoS.allCases.randomElement(using: &rng) ?? .normal
                let characteristic = OutgoingSchedulerPropertyTests.characteristics.randomElement(using: &rng) ?? OutgoingSchedulerPropertyTests.characteristics[0]
                let size = Int.random(in: 0...scheduler.configuration.maxWriteSize, using: &rng)
                let write = OutgoingWrite(characteristic: characteristic, bytes: Array(repeating: 0x5A, count: size), qos: qos)
                let depth = scheduler.queueDepth(device: device, qos: qos)
                var refused: OutgoingSchedulerError?
                do {
                    try scheduler.enqueue(write, for: device, now: .zero)
                } catch {
                    refused = error
                }
                if let refused {
                    #expect(refused == .queueFull(device, qos, depth: scheduler.configuration.capacity(for: qos)))
                    #expect(depth == scheduler.configuration.capacity(for: qos))
                } else {
                    let type = try #require(write.mode.resolve(qos: qos, properties: characteristic.properties))
                    shadow.queues[device, default: [:]][qos, default: []].append(OutgoingScheduledWrite(
                        device: device, characteristic: characteristic, bytes: write.bytes, qos: qos, writeType: type, sequence: 0
                    ))
                }
                return nil
            case 45..<60:
                scheduler.creditsAvailable(device: device, count: Int.random(in: 1...4, using: &rng))
                return nil
            case 60..<70:
                scheduler.writeCompleted(device: device)
                return nil
            default:
                guard let picked = scheduler.nextWrite() else {
                    #expect(!devices.contains { shadow.isSendable($0, scheduler) }, "nothing picked while a device could send")
                    return nil
                }
                let expected = try #require(shadow.head(picked.device, picked.qos), "picked a write that was never queued")
                #expect(picked.bytes == expected.bytes && picked.characteristic == expected.characteristic && picked.writeType == expected.writeType)
                shadow.queues[picked.device]?[picked.qos]?.removeFirst()
                return picked
            }
        }
    }

    @Test func neverHoldsMoreThanAQueuesCapacityAndRefusesOnlyWhenFull() async {
        await propertyCheck(count: 200, input: Gen.uint64()) { seed in
            var run = Run(seed: seed)
            for _ in 0..<400 {
                _ = try run.step()
                for device in run.devices {
                    for qos in OutgoingQoS.allCases {
                        #expect(run.scheduler.queueDepth(device: device, qos: qos) <= run.scheduler.configuration.capacity(for: qos))
                        #expect(run.scheduler.queueDepth(device: device, qos: qos) == run.shadow.queues[device]?[qos]?.count ?? 0)
                    }
                }
            }
        }
    }

    @Test func neverSpendsCreditsItDoesNotHaveNorExceedsTheInFlightLimit() async {
        await propertyCheck(count: 200, input: Gen.uint64()) { seed in
            var run = Run(seed: seed)
            for _ in 0..<400 {
                _ = try run.step()
                for device in run.devices {
                    #expect((0...run.scheduler.configuration.maxCredits).contains(run.scheduler.credits(device: device)))
                    #expect((0...run.scheduler.configuration.maxInFlightWithResponse).contains(run.scheduler.inFlight(device: device)))
                }
            }
        }
    }

    /// Deficit round robin: while a device can send, the others get at most
    /// `(⌈maxWriteSize / quantum⌉ + 1) × (devices − 1)` turns of at most `quantum + maxWriteSize` bytes.
    @Test func servesEveryDeviceThatCanSendWithinTheRoundRobinBound() async {
        await propertyCheck(count: 200, input: Gen.uint64()) { seed in
            var run = Run(seed: seed)
            let configuration = run.scheduler.configuration
            let turns = (configuration.maxWriteSize + configuration.quantum - 1) / configuration.quantum + 1
            let bound = turns * (run.devices.count - 1) * (configuration.quantum + configuration.maxWriteSize)
            var othersServedWhileWaiting: [DeviceID: Int] = [:]
            for _ in 0..<600 {
                guard let picked = try run.step() else {
                    for device in run.devices where !run.shadow.isSendable(device, run.scheduler) {
                        othersServedWhileWaiting[device] = nil
                    }
                    continue
                }
                othersServedWhileWaiting[picked.device] = nil
                for device in run.devices where device != picked.device && run.shadow.isSendable(device, run.scheduler) {
                    othersServedWhileWaiting[device, default: 0] += max(1, picked.bytes.count)
                    #expect(othersServedWhileWaiting[device, default: 0] <= bound, "device \(device) starved, seed \(seed)")
                }
            }
        }
    }

    /// Inside a device, a class that can send is passed over at most `starvationLimit + 2` times.
    @Test func servesEveryClassThatCanSendWithinTheStarvationLimit() async {
        await propertyCheck(count: 200, input: Gen.uint64()) { seed in
            var run = Run(seed: seed)
            let bound = run.scheduler.configuration.starvationLimit + 2
            var passedOver: [DeviceID: [OutgoingQoS: Int]] = [:]
            for _ in 0..<600 {
                let sendableBefore = run.devices.map { device in
                    (device, OutgoingQoS.allCases.filter { run.shadow.isSendable(device, $0, run.scheduler) })
                }
                guard let picked = try run.step() else { continue }
                passedOver[picked.device, default: [:]][picked.qos] = 0
                for (device, classes) in sendableBefore where device == picked.device {
                    for qos in classes where qos != picked.qos {
                        passedOver[device, default: [:]][qos, default: 0] += 1
                        #expect(passedOver[device, default: [:]][qos, default: 0] <= bound, "\(qos) starved, seed \(seed)")
                    }
                }
            }
        }
    }
}
