import Testing
import FleetCore

/// Stories of the scheduler: enqueue, grant credits, pick, check exactly what goes out.
@Suite struct OutgoingSchedulerTests {
    let a = PoolFixture.device(1)
    let b = PoolFixture.device(2)
    let both = OutgoingCharacteristic(id: "char-both", properties: [.write, .writeWithoutResponse])
    let ackedOnly = OutgoingCharacteristic(id: "char-acked", properties: [.write])
    let unackedOnly = OutgoingCharacteristic(id: "char-unacked", properties: [.writeWithoutResponse])
    let readOnly = OutgoingCharacteristic(id: "char-read", properties: [])

    func write(_ bytes: [UInt8], qos: OutgoingQoS = .normal, to characteristic: OutgoingCharacteristic? = nil, mode: OutgoingWriteMode = .automatic) -> OutgoingWrite {
        OutgoingWrite(characteristic: characteristic ?? unackedOnly, bytes: bytes, qos: qos, mode: mode)
    }

    func value(_ bytes: [UInt8], qos: OutgoingQoS = .normal) -> OutgoingWrite {
        OutgoingWrite(characteristic: unackedOnly, bytes: bytes, qos: qos, isReplaceable: true)
    }

    /// Picks until nothing is sendable.
    func drain(_ scheduler: inout OutgoingScheduler) -> [OutgoingScheduledWrite] {
        var out: [OutgoingScheduledWrite] = []
        while let next = scheduler.nextWrite() { out.append(next) }
        return out
    }

    // MARK: - Bounds

    @Test func refusesAWriteWhenTheQueueIsFullAndSaysWhichQueue() throws {
        var scheduler = OutgoingScheduler(configuration: OutgoingConfiguration(normalQueueCapacity: 2))
        try scheduler.enqueue(write([1]), for: a, now: .zero)
        try scheduler.enqueue(write([2]), for: a, now: .zero)
        #expect(throws: OutgoingSchedulerError.queueFull(a, .normal, depth: 2)) {
            try scheduler.enqueue(write([3]), for: a, now: .zero)
        }
        #expect(scheduler.queueDepth(device: a, qos: .normal) == 2)
    }

    @Test func aWithdrawnWriteNeverGoesOutAndTheOthersKeepTheirOrder() throws {
        var scheduler = OutgoingScheduler(configuration: OutgoingConfiguration(normalQueueCapacity: 3))
        let first = scheduler.upcomingSequence
        try scheduler.enqueue(write([1]), for: a, now: .zero)
        let second = scheduler.upcomingSequence
        try scheduler.enqueue(write([2]), for: a, now: .zero)
        try scheduler.enqueue(write([3]), for: a, now: .zero)
        let withdrawn = scheduler.withdraw(sequence: second, of: a)
        let again = scheduler.withdraw(sequence: second, of: a)
        let elsewhere = scheduler.withdraw(sequence: first, of: b)
        #expect(withdrawn)
        #expect(!again, "only once")
        #expect(!elsewhere, "another device's queue holds nothing of it")
        #expect(scheduler.queueDepth(device: a, qos: .normal) == 2)
        // Room again for one more, and the rest goes out in order without the withdrawn one.
        try scheduler.enqueue(write([4]), for: a, now: .zero)
        scheduler.creditsAvailable(device: a, count: 10)
        #expect(drain(&scheduler).map(\.bytes) == [[1], [3], [4]])
        let released = scheduler.withdraw(sequence: first, of: a)
        #expect(!released, "released already")
    }

    @Test func withdrawingADevicesLastWriteTakesItOutOfTheRing() throws {
        var scheduler = OutgoingScheduler()
        let only = scheduler.upcomingSequence
        try scheduler.enqueue(write([1]), for: a, now: .zero)
        try scheduler.enqueue(write([2]), for: b, now: .zero)
        let withdrawn = scheduler.withdraw(sequence: only, of: a)
        #expect(withdrawn)
        scheduler.creditsAvailable(device: a, count: 10)
        scheduler.creditsAvailable(device: b, count: 10)
        #expect(drain(&scheduler).map(\.bytes) == [[2]])
    }

    @Test func aFullQueueForOneClassDoesNotBlockAnother() throws {
        var scheduler = OutgoingScheduler(configuration: OutgoingConfiguration(normalQueueCapacity: 1))
        try scheduler.enqueue(write([1]), for: a, now: .zero)
        #expect(throws: Never.self) { try scheduler.enqueue(write([2], qos: .bulk), for: a, now: .zero) }
    }

    @Test func refusesAWriteLongerThanTheMaximum() {
        var scheduler = OutgoingScheduler(configuration: OutgoingConfiguration(maxWriteSize: 4))
        #expect(throws: OutgoingSchedulerError.tooLarge(size: 5, limit: 4)) {
            try scheduler.enqueue(write([1, 2, 3, 4, 5]), for: a, now: .zero)
        }
    }

    // MARK: - Write type

    @Test func automaticSendsControlWithResponseWhenAllowed() {
        #expect(OutgoingWriteMode.automatic.resolve(qos: .control, properties: both.properties) == .withResponse)
    }

    @Test func automaticSendsOtherClassesWithoutResponseWhenAllowed() {
        #expect(OutgoingWriteMode.automatic.resolve(qos: .bulk, properties: both.properties) == .withoutResponse)
    }

    @Test func automaticFallsBackToTheOnlyTypeTheCharacteristicAllows() {
        #expect(OutgoingWriteMode.automatic.resolve(qos: .control, properties: unackedOnly.properties) == .withoutResponse)
        #expect(OutgoingWriteMode.automatic.resolve(qos: .normal, properties: ackedOnly.properties) == .withResponse)
    }

    @Test func refusesAWriteTypeTheCharacteristicDoesNotAllow() {
        var scheduler = OutgoingScheduler()
        #expect(throws: OutgoingSchedulerError.notWritable(ackedOnly, .withoutResponse)) {
            try scheduler.enqueue(write([1], to: ackedOnly, mode: .withoutResponse), for: a, now: .zero)
        }
        #expect(throws: OutgoingSchedulerError.notWritable(readOnly, .automatic)) {
            try scheduler.enqueue(write([1], to: readOnly), for: a, now: .zero)
        }
    }

    // MARK: - Pacing

    @Test func holdsWritesWithoutResponseUntilTheTransportGrantsCredits() throws {
        var scheduler = OutgoingScheduler()
        try scheduler.enqueue(write([1]), for: a, now: .zero)
        try scheduler.enqueue(write([2]), for: a, now: .zero)
        #expect(scheduler.nextWrite() == nil)
        scheduler.creditsAvailable(device: a, count: 1)
        #expect(drain(&scheduler).map(\.bytes) == [[1]])
    }

    @Test func capsCreditsSoAnOverReportingTransportCannotBuildABurst() {
        var scheduler = OutgoingScheduler(configuration: OutgoingConfiguration(maxCredits: 4))
        scheduler.creditsAvailable(device: a, count: 1000)
        #expect(scheduler.credits(device: a) == 4)
    }

    @Test func limitsWritesWithResponseInFlightUntilOneCompletes() throws {
        var scheduler = OutgoingScheduler(configuration: OutgoingConfiguration(maxInFlightWithResponse: 1))
        try scheduler.enqueue(write([1], to: ackedOnly), for: a, now: .zero)
        try scheduler.enqueue(write([2], to: ackedOnly), for: a, now: .zero)
        #expect(drain(&scheduler).map(\.bytes) == [[1]])
        scheduler.writeCompleted(device: a)
        #expect(drain(&scheduler).map(\.bytes) == [[2]])
    }

    @Test func forgetsCreditsAndWritesInFlightWhenTheLinkIsLost() throws {
        var scheduler = OutgoingScheduler()
        scheduler.creditsAvailable(device: a, count: 3)
        try scheduler.enqueue(write([1], to: ackedOnly), for: a, now: .zero)
        _ = scheduler.nextWrite()
        scheduler.linkLost(device: a)
        #expect(scheduler.credits(device: a) == 0)
        #expect(scheduler.inFlight(device: a) == 0)
    }

    @Test func holdsQueuedWritesFromLinkLossUntilTheLinkIsBack() throws {
        var scheduler = OutgoingScheduler()
        scheduler.linkLost(device: a)
        try scheduler.enqueue(write([1], to: ackedOnly), for: a, now: .zero)
        try scheduler.enqueue(write([2]), for: a, now: .zero)
        scheduler.creditsAvailable(device: a, count: 4)
        #expect(scheduler.nextWrite() == nil, "nothing goes out while the device is not linked")
        #expect(!scheduler.isLinked(device: a))
        scheduler.linkEstablished(device: a)
        #expect(drain(&scheduler).map(\.bytes) == [[1], [2]])
    }

    @Test func perDeviceBoundsOverrideTheSchedulerDefaults() throws {
        var scheduler = OutgoingScheduler(configuration: OutgoingConfiguration(normalQueueCapacity: 64, maxInFlightWithResponse: 1))
        scheduler.configure(device: a, options: OutgoingDeviceOptions(queueCapacities: [.normal: 2], maxInFlightWithResponse: 2))
        try scheduler.enqueue(write([1], to: ackedOnly), for: a, now: .zero)
        try scheduler.enqueue(write([2], to: ackedOnly), for: a, now: .zero)
        #expect(throws: OutgoingSchedulerError.self) { try scheduler.enqueue(write([3], to: ackedOnly), for: a, now: .zero) }
        #expect(drain(&scheduler).map(\.bytes) == [[1], [2]], "two writes with response in flight at once")
        // Another device keeps the scheduler's bounds.
        for byte in 0..<64 { try scheduler.enqueue(write([UInt8(byte)]), for: b, now: .zero) }
        #expect(scheduler.queueDepth(device: b, qos: .normal) == 64)
    }

    @Test func aLoweredBoundDropsNothingButRefusesUntilDrained() throws {
        var scheduler = OutgoingScheduler()
        for byte in UInt8(0)..<4 { try scheduler.enqueue(write([byte]), for: a, now: .zero) }
        scheduler.configure(device: a, options: OutgoingDeviceOptions(queueCapacities: [.normal: 2]))
        #expect(scheduler.queueDepth(device: a, qos: .normal) == 4)
        #expect(throws: OutgoingSchedulerError.self) { try scheduler.enqueue(write([9]), for: a, now: .zero) }
        scheduler.creditsAvailable(device: a, count: 3)
        #expect(drain(&scheduler).count == 3)
        try scheduler.enqueue(write([9]), for: a, now: .zero)
        #expect(scheduler.queueDepth(device: a, qos: .normal) == 2)
    }

    @Test func dropsEverythingQueuedForARemovedDevice() throws {
        var scheduler = OutgoingScheduler()
        try scheduler.enqueue(write([1]), for: a, now: .zero)
        try scheduler.enqueue(write([2], qos: .bulk), for: a, now: .zero)
        #expect(scheduler.removeDevice(a) == 2)
        scheduler.creditsAvailable(device: a, count: 5)
        #expect(scheduler.nextWrite() == nil)
    }

    // MARK: - Order inside a device

    @Test func sendsControlBeforeNormalBeforeBulk() throws {
        var scheduler = OutgoingScheduler()
        try scheduler.enqueue(write([3], qos: .bulk), for: a, now: .zero)
        try scheduler.enqueue(write([2], qos: .normal), for: a, now: .zero)
        try scheduler.enqueue(write([1], qos: .control), for: a, now: .zero)
        scheduler.creditsAvailable(device: a, count: 3)
        #expect(drain(&scheduler).map(\.qos) == [.control, .normal, .bulk])
    }

    @Test func keepsQueueOrderInsideAClass() throws {
        var scheduler = OutgoingScheduler()
        for value in UInt8(0)..<5 { try scheduler.enqueue(write([value]), for: a, now: .zero) }
        scheduler.creditsAvailable(device: a, count: 5)
        #expect(drain(&scheduler).map(\.bytes) == (0..<5).map { [UInt8($0)] })
    }

    @Test func servesBulkAfterTheStarvationLimitDespiteSteadyControlTraffic() throws {
        var scheduler = OutgoingScheduler(configuration: OutgoingConfiguration(starvationLimit: 3))
        try scheduler.enqueue(write([0xB], qos: .bulk), for: a, now: .zero)
        for _ in 0..<6 { try scheduler.enqueue(write([0xC], qos: .control), for: a, now: .zero) }
        scheduler.creditsAvailable(device: a, count: 7)
        #expect(drain(&scheduler).map(\.qos) == [.control, .control, .control, .bulk, .control, .control, .control])
    }

    @Test func aClassWaitingForCreditsDoesNotBlockAClassThatCanSend() throws {
        var scheduler = OutgoingScheduler()
        try scheduler.enqueue(write([1], qos: .control, to: unackedOnly), for: a, now: .zero)
        try scheduler.enqueue(write([2], qos: .normal, to: ackedOnly), for: a, now: .zero)
        #expect(drain(&scheduler).map(\.bytes) == [[2]])
    }

    // MARK: - Coalescing

    @Test func coalescesAWriteToTheSameCharacteristicWithinTheWindow() throws {
        var scheduler = OutgoingScheduler()
        scheduler.configure(device: a, options: OutgoingDeviceOptions(coalescingWindow: .milliseconds(100)))
        let first = scheduler.upcomingSequence
        try scheduler.enqueue(value([1]), for: a, now: .zero)
        try scheduler.enqueue(write([9], to: both, mode: .withoutResponse), for: a, now: .zero)
        let result = try scheduler.enqueue(value([2]), for: a, now: PoolFixture.instant(milliseconds: 99))
        #expect(result == .coalesced(into: first), "it goes out as the first write, under its sequence")
        scheduler.creditsAvailable(device: a, count: 5)
        // The new value takes the old one's place, ahead of the write queued between them.
        #expect(drain(&scheduler).map(\.bytes) == [[2], [9]])
    }

    @Test func queuesSeparatelyOnceTheWindowHasPassed() throws {
        var scheduler = OutgoingScheduler()
        scheduler.configure(device: a, options: OutgoingDeviceOptions(coalescingWindow: .milliseconds(100)))
        try scheduler.enqueue(value([1]), for: a, now: .zero)
        let result = try scheduler.enqueue(value([2]), for: a, now: PoolFixture.instant(milliseconds: 100))
        #expect(result == .queued)
        #expect(scheduler.queueDepth(device: a, qos: .normal) == 2)
    }

    @Test func neverCoalescesControlWrites() throws {
        var scheduler = OutgoingScheduler()
        scheduler.configure(device: a, options: OutgoingDeviceOptions(coalescingWindow: .seconds(10)))
        try scheduler.enqueue(value([1], qos: .control), for: a, now: .zero)
        try scheduler.enqueue(value([2], qos: .control), for: a, now: .zero)
        #expect(scheduler.queueDepth(device: a, qos: .control) == 2)
    }

    @Test func coalescesIntoAFullQueueWithoutGrowingIt() throws {
        var scheduler = OutgoingScheduler(configuration: OutgoingConfiguration(normalQueueCapacity: 1))
        scheduler.configure(device: a, options: OutgoingDeviceOptions(coalescingWindow: .seconds(1)))
        let first = scheduler.upcomingSequence
        try scheduler.enqueue(value([1]), for: a, now: .zero)
        let result = try scheduler.enqueue(value([2]), for: a, now: .zero)
        #expect(result == .coalesced(into: first))
        #expect(scheduler.queueDepth(device: a, qos: .normal) == 1)
    }

    @Test func neverCoalescesWritesThatAreNotReplaceable() throws {
        var scheduler = OutgoingScheduler()
        scheduler.configure(device: a, options: OutgoingDeviceOptions(coalescingWindow: .seconds(10)))
        for part in 0..<3 {
            try scheduler.enqueue(write(Array(repeating: UInt8(part), count: 20)), for: a, now: .zero)
        }
        #expect(scheduler.queueDepth(device: a, qos: .normal) == 3)
    }

    // MARK: - Fairness across devices

    @Test func aDeviceWithLargeWritesDoesNotCrowdOutOneWithSmallWrites() throws {
        var scheduler = OutgoingScheduler(configuration: OutgoingConfiguration(quantum: 100, maxWriteSize: 100))
        for _ in 0..<10 {
            try scheduler.enqueue(write(Array(repeating: 0, count: 100)), for: a, now: .zero)
            try scheduler.enqueue(write(Array(repeating: 1, count: 10)), for: b, now: .zero)
        }
        scheduler.creditsAvailable(device: a, count: 10)
        scheduler.creditsAvailable(device: b, count: 10)
        let firstTwelve = drain(&scheduler).prefix(12).map(\.device)
        // One 100-byte write from a per turn, then b spends its 100 bytes on all ten of its writes.
        #expect(firstTwelve == [a] + Array(repeating: b, count: 10) + [a])
    }

    @Test func givesEachBusyDeviceATurnInRoundRobinOrder() throws {
        var scheduler = OutgoingScheduler(configuration: OutgoingConfiguration(quantum: 10, maxWriteSize: 10))
        let devices = [a, b, PoolFixture.device(3)]
        for device in devices {
            for _ in 0..<3 { try scheduler.enqueue(write(Array(repeating: 0, count: 10)), for: device, now: .zero) }
            scheduler.creditsAvailable(device: device, count: 3)
        }
        #expect(drain(&scheduler).map(\.device) == devices + devices + devices)
    }
}
