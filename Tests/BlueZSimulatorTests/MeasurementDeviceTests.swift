import BlueZSimulator
import DBus
import Foundation
import GATT
import Testing
import TestSupport

/// Blood-pressure cuffs and weight scales as bluetoothd 5.66 and Linux 6.1 have them: their
/// measurements and clock want an encrypted link, which bluetoothd gets by pairing on the spot
/// (Just Works silently, a passkey through the default agent); they sleep, wake to measure, and
/// indicate their queue to a client that enabled indications — again by itself once a bonded
/// device is back — then hang up.
@Suite("bluez-sim: measurement devices", .serialized)
struct MeasurementDeviceTests {
    static let cuff = "C0:FF:EE:C0:FF:01"
    static let scale = "C0:FF:EE:5C:A1:02"
    static let passkey: UInt32 = 246_810
    static let bloodPressureMeasurementUUID = "00002a35-0000-1000-8000-00805f9b34fb"
    static let weightMeasurementUUID = "00002a9d-0000-1000-8000-00805f9b34fb"
    static let currentTimeUUID = "00002a2b-0000-1000-8000-00805f9b34fb"

    /// A cuff and a scale, never asleep, new to the gateway.
    static var awakeUnpaired: Scenario {
        Scenario(
            seed: 29, adapters: [AdapterSpec(name: "hci0", slots: 5)],
            devices: [
                DeviceSpec(kind: .bloodPressureCuff, address: cuff, passkey: passkey),
                DeviceSpec(kind: .weightScale, address: scale),
            ])
    }

    /// A cuff bonded with hci0 that sleeps until the test wakes it.
    static func sleepyBondedCuff(faults: FaultSettings? = nil) -> Scenario {
        Scenario(
            seed: 29, adapters: [AdapterSpec(name: "hci0", slots: 5)],
            devices: [
                DeviceSpec(kind: .bloodPressureCuff, address: cuff, bonded: true, faults: faults, wake: .onDemand())
            ])
    }

    // MARK: - Helpers

    /// Polls `condition` (a counter, the simulator's state) until it holds, for a slow machine.
    /// A test agent answering `passkey`, exported on the fixture's client and registered
    /// (KeyboardDisplay): bluetoothd's first registered agent is its default one.
    static func registerAgent(on fixture: SimulatorFixture, passkey: UInt32) async throws -> PairingAgentTests.TestAgent {
        let agent = PairingAgentTests.TestAgent()
        try await agent.export(on: fixture.client, passkey: passkey)
        try await fixture.call(
            "/org/bluez", "org.bluez.AgentManager1", "RegisterAgent", [.objectPath(PairingAgentTests.agentPath), .string("KeyboardDisplay")])
        return agent
    }

    /// Waits for a state of the simulator no signal announces (a counter, a pending Connect),
    /// looking every 10 ms, within the suite's usual bound for a starved test process.
    static func waitUntil(_ what: String, _ condition: @escaping @Sendable () async throws -> Bool) async throws {
        try await withTimeout(.seconds(60), what) {
            while try await !condition() { try await Task.sleep(for: .milliseconds(10)) }
        }
    }

    /// The next `count` `Value` changes on the stream, in order.
    static func values(
        _ stream: AsyncThrowingStream<DBusMessage, any Error>, count: Int, _ what: String
    ) async throws -> [[UInt8]] {
        try await withTimeout(.seconds(10), what) {
            var values: [[UInt8]] = []
            for try await message in stream {
                guard let changed = try? message.body.decode([String: DBusValue].self, at: 1), let value = changed["Value"] else {
                    continue
                }
                values.append(try [UInt8](dbusValue: value))
                if values.count == count { return values }
            }
            throw ExpectationFailed(description: "the signals ended before \(what)")
        }
    }

    /// Waits for the device's `Disconnected` signal and returns its reason.
    static func disconnectReason(_ stream: AsyncThrowingStream<DBusMessage, any Error>) async throws -> String {
        let message = try await stream.first(within: .seconds(10), "the device's Disconnected") { _ in true }
        return try message.body.decode(String.self, at: 0)
    }

    static func counter(_ fixture: SimulatorFixture, _ name: KeyPath<SimulatorCounters, [String: Int]>, _ key: String) async -> Int {
        await fixture.simulator.counterSnapshot()[keyPath: name][key] ?? 0
    }

    // MARK: - GATT

    @Test("each kind has its GATT database: the measurement service, Current Time, battery, device information")
    func gattTrees() async throws {
        let fixture = try await SimulatorFixture.start(Self.awakeUnpaired)
        let expected: [(String, Set<String>, [String: Set<String>])] = [
            (
                Self.cuff, ["00001810", "00001805", "0000180f", "0000180a"],
                [Self.bloodPressureMeasurementUUID: ["indicate"], "00002a49-0000-1000-8000-00805f9b34fb": ["read"],
                 Self.currentTimeUUID: ["read", "write", "notify"]]
            ),
            (
                Self.scale, ["0000181d", "00001805", "0000180f", "0000180a"],
                [Self.weightMeasurementUUID: ["indicate"], "00002a9e-0000-1000-8000-00805f9b34fb": ["read"],
                 Self.currentTimeUUID: ["read", "write", "notify"]]
            ),
        ]
        for (address, services, characteristics) in expected {
            let device = try await fixture.connect(address)
            let objects = try await fixture.managedObjects().filter { $0.key.isDescendant(of: device) }
            let serviceUUIDs = Set(objects.values.compactMap { interfaces -> String? in
                guard case .string(let uuid)? = interfaces["org.bluez.GattService1"]?["UUID"] else { return nil }
                return String(uuid.prefix(8))
            })
            #expect(serviceUUIDs == services, "\(address)")
            for (uuid, flags) in characteristics {
                let path = try await fixture.characteristic(uuid, of: device)
                let reply = try await fixture.property(path, "org.bluez.GattCharacteristic1", "Flags")
                #expect(Set(try [String](dbusValue: reply)) == flags, "\(address) \(uuid)")
            }
        }
        let kinds = await (fixture.simulator.kind(of: Self.cuff), fixture.simulator.kind(of: Self.scale))
        #expect(kinds.0 == .bloodPressureCuff && kinds.1 == .weightScale)
        await fixture.stop()
    }

    // MARK: - Encryption on demand

    @Test("StartNotify on an unpaired Just Works scale pairs it silently, then succeeds")
    func justWorksPairsSilently() async throws {
        let fixture = try await SimulatorFixture.start(Self.awakeUnpaired)
        let agent = try await Self.registerAgent(on: fixture, passkey: Self.passkey)
        let device = try await fixture.connect(Self.scale)
        let measurement = try await fixture.characteristic(Self.weightMeasurementUUID, of: device)
        try await fixture.call(measurement, "org.bluez.GattCharacteristic1", "StartNotify")
        #expect(try await fixture.property(measurement, "org.bluez.GattCharacteristic1", "Notifying") == .boolean(true))
        #expect(try await fixture.property(device, "org.bluez.Device1", "Paired") == .boolean(true))
        #expect(try await fixture.property(device, "org.bluez.Device1", "Bonded") == .boolean(true))
        #expect(try await fixture.counter("Pairings", Self.scale) == 1)
        #expect(agent.asked.withLock { $0 }.isEmpty)
        await fixture.stop()
    }

    @Test("StartNotify on a passkey cuff asks the default agent — another client's, registered only — and bonds with the right key")
    func passkeyAsksTheDefaultAgent() async throws {
        let fixture = try await SimulatorFixture.start(Self.awakeUnpaired)
        // A desktop's agent, registered but never made default by RequestDefaultAgent: bluetoothd
        // 5.66 puts every agent in its queue of defaults.
        let desktop = try await DBusConnection.connect(to: .address(fixture.bus.address), threadName: "desktop-agent")
        let agent = PairingAgentTests.TestAgent()
        try await agent.export(on: desktop, passkey: Self.passkey)
        try await desktop.call(
            destination: "org.bluez", path: "/org/bluez", interface: "org.bluez.AgentManager1", member: "RegisterAgent",
            [.objectPath(PairingAgentTests.agentPath), .string("KeyboardDisplay")])
        let device = try await fixture.connect(Self.cuff)
        let measurement = try await fixture.characteristic(Self.bloodPressureMeasurementUUID, of: device)
        try await fixture.call(measurement, "org.bluez.GattCharacteristic1", "StartNotify")
        #expect(agent.asked.withLock { $0 } == [device])
        #expect(try await fixture.property(device, "org.bluez.Device1", "Bonded") == .boolean(true))
        #expect(try await fixture.counter("Pairings", Self.cuff) == 1)
        await desktop.close()
        await fixture.stop()
    }

    @Test("with no default agent, or one with the wrong key, StartNotify on a passkey cuff fails NotPermitted \"Not paired\" and nothing is bonded")
    func failedPairingFailsStartNotify() async throws {
        let fixture = try await SimulatorFixture.start(Self.awakeUnpaired)
        let device = try await fixture.connect(Self.cuff)
        let measurement = try await fixture.characteristic(Self.bloodPressureMeasurementUUID, of: device)
        _ = try await expectError("org.bluez.Error.NotPermitted", "Not paired") {
            try await fixture.call(measurement, "org.bluez.GattCharacteristic1", "StartNotify")
        }
        let wrong = try await Self.registerAgent(on: fixture, passkey: 111_111)
        _ = try await expectError("org.bluez.Error.NotPermitted", "Not paired") {
            try await fixture.call(measurement, "org.bluez.GattCharacteristic1", "StartNotify")
        }
        #expect(wrong.asked.withLock { $0 } == [device])
        #expect(try await fixture.property(device, "org.bluez.Device1", "Paired") == .boolean(false))
        #expect(try await fixture.property(device, "org.bluez.Device1", "Bonded") == .boolean(false))
        #expect(try await fixture.property(measurement, "org.bluez.GattCharacteristic1", "Notifying") == .boolean(false))
        #expect(try await fixture.counter("Pairings", Self.cuff) == 0)
        #expect(try await fixture.counters()["PairingFailures"] == .uint64(2))
        await fixture.stop()
    }

    @Test("Device1.Pair still bonds a cuff through the caller's agent; the encrypted link then enables indications with no second pairing")
    func pairThenStartNotify() async throws {
        let fixture = try await SimulatorFixture.start(Self.awakeUnpaired)
        let agent = try await Self.registerAgent(on: fixture, passkey: Self.passkey)
        let device = try await fixture.connect(Self.cuff)
        try await fixture.call(device, "org.bluez.Device1", "Pair")
        let measurement = try await fixture.characteristic(Self.bloodPressureMeasurementUUID, of: device)
        try await fixture.call(measurement, "org.bluez.GattCharacteristic1", "StartNotify")
        #expect(agent.asked.withLock { $0 } == [device])
        #expect(try await fixture.counter("Pairings", Self.cuff) == 1)
        #expect(try await fixture.property(measurement, "org.bluez.GattCharacteristic1", "Notifying") == .boolean(true))
        await fixture.stop()
    }

    // MARK: - Sleeping devices

    @Test("Connect to a sleeping cuff stays pending, outside the attempts in flight, and completes once it is woken")
    func pendingConnectCompletesOnWake() async throws {
        let fixture = try await SimulatorFixture.start(Self.sleepyBondedCuff())
        let device = try #require(await fixture.simulator.devicePath(of: Self.cuff))
        let connect = Task { try await fixture.call(device, "org.bluez.Device1", "Connect") }
        try await Self.waitUntil("the Connect waiting for the cuff") {
            await fixture.simulator.counterSnapshot().pendingConnects["hci0"] == 1
        }
        #expect(try await fixture.property(device, "org.bluez.Device1", "Connected") == .boolean(false))
        #expect(await fixture.simulator.counterSnapshot().maxConcurrentAttempts["hci0"] == nil)
        #expect(await fixture.simulator.wake(address: Self.cuff))
        try await connect.value
        #expect(try await fixture.property(device, "org.bluez.Device1", "Connected") == .boolean(true))
        let counters = await fixture.simulator.counterSnapshot()
        #expect(counters.pendingConnects["hci0"] == 0)
        #expect(counters.maxConcurrentAttempts["hci0"] == 1)
        #expect(counters.wakeUps[Self.cuff] == 1)
        #expect(counters.recordsTaken[Self.cuff] == 3)
        await fixture.stop()
    }

    @Test("a Connect pending for a cuff nobody wakes fails le-connection-abort-by-local after the pending-connect timeout")
    func pendingConnectTimesOut() async throws {
        let fixture = try await SimulatorFixture.start(Self.sleepyBondedCuff())
        let device = try #require(await fixture.simulator.devicePath(of: Self.cuff))
        _ = try await expectError("org.bluez.Error.Failed", "le-connection-abort-by-local") {
            try await fixture.call(device, "org.bluez.Device1", "Connect")
        }
        #expect(await fixture.simulator.counterSnapshot().pendingConnects["hci0"] == 0)
        #expect(try await fixture.property(device, "org.bluez.Device1", "Connected") == .boolean(false))
        await fixture.stop()
    }

    @Test("a device whose awake window ends with nobody connected sleeps again, its records still queued")
    func scheduledWakeWithoutAClient() async throws {
        let scenario = Scenario(
            seed: 29, adapters: [AdapterSpec(name: "hci0", slots: 5)],
            devices: [
                DeviceSpec(kind: .weightScale, address: Self.scale, wake: WakeSchedule(awake: 0.3, asleep: 1e6, firstWakeAfter: 0.05))
            ])
        let fixture = try await SimulatorFixture.start(scenario)
        try await Self.waitUntil("the scheduled wake") { await Self.counter(fixture, \.wakeUps, Self.scale) == 1 }
        try await withTimeout(.seconds(60), "sleep after the awake window") { try await fixture.simulator.waitUntilAsleep(address: Self.scale) }
        #expect(await fixture.simulator.queuedRecordCount(of: Self.scale) == 3)
        #expect(await Self.counter(fixture, \.recordsDelivered, Self.scale) == 0)
        await fixture.stop()
    }

    @Test("a woken bonded cuff that reconnects delivers its records as Value changes without StartNotify, then hangs up (remote)")
    func bondedCuffDeliversWithoutStartNotify() async throws {
        let fixture = try await SimulatorFixture.start(Self.sleepyBondedCuff())
        let device = try #require(await fixture.simulator.devicePath(of: Self.cuff))
        let disconnects = try await fixture.signals(path: device, interface: "org.bluez.Device1", member: "Disconnected")
        // The session of an earlier link: StartNotify once, the link encrypted with the bond's key.
        await fixture.simulator.wake(address: Self.cuff)
        try await fixture.call(device, "org.bluez.Device1", "Connect")
        let measurement = try await fixture.characteristic(Self.bloodPressureMeasurementUUID, of: device)
        let changes = try await fixture.signals(path: measurement, interface: propertiesInterface, member: "PropertiesChanged")
        try await fixture.call(measurement, "org.bluez.GattCharacteristic1", "StartNotify")
        let first = try await Self.values(changes, count: 3, "the first wake's records")
        #expect(try await Self.disconnectReason(disconnects) == "org.bluez.Reason.Remote")
        #expect(await fixture.simulator.isAwake(address: Self.cuff) == false)

        // The next wake: Connect alone; bluetoothd enables the kept session itself.
        await fixture.simulator.wake(address: Self.cuff)
        try await fixture.call(device, "org.bluez.Device1", "Connect")
        let second = try await Self.values(changes, count: 3, "the second wake's records, without StartNotify")
        #expect(try await Self.disconnectReason(disconnects) == "org.bluez.Reason.Remote")
        #expect(first + second == (await fixture.simulator.takenRecords(of: Self.cuff)))
        let counters = await fixture.simulator.counterSnapshot()
        #expect(counters.recordsDelivered[Self.cuff] == 6)
        #expect(counters.recordsTaken[Self.cuff] == 6)
        #expect(counters.pairings[Self.cuff] == nil)
        #expect(counters.agentRequests == 0)
        await fixture.stop()
    }

    @Test("a link dropped mid-burst keeps the rest for the next wake: every record delivered once, in order")
    func linkDroppedMidBurst() async throws {
        let fixture = try await SimulatorFixture.start(Self.sleepyBondedCuff(faults: FaultSettings(dropLinkAfterRecords: 1)))
        let device = try #require(await fixture.simulator.devicePath(of: Self.cuff))
        await fixture.simulator.wake(address: Self.cuff)
        try await fixture.call(device, "org.bluez.Device1", "Connect")
        let measurement = try await fixture.characteristic(Self.bloodPressureMeasurementUUID, of: device)
        let changes = try await fixture.signals(path: measurement, interface: propertiesInterface, member: "PropertiesChanged")
        let disconnects = try await fixture.signals(path: device, interface: "org.bluez.Device1", member: "Disconnected")
        try await fixture.call(measurement, "org.bluez.GattCharacteristic1", "StartNotify")
        let first = try await Self.values(changes, count: 1, "the record before the drop")
        #expect(try await Self.disconnectReason(disconnects) == "org.bluez.Reason.Timeout")
        #expect(await fixture.simulator.queuedRecordCount(of: Self.cuff) == 2)

        try await fixture.control("ClearFaults", [.string(Self.cuff)])
        await fixture.simulator.wake(address: Self.cuff)
        try await fixture.call(device, "org.bluez.Device1", "Connect")
        let rest = try await Self.values(changes, count: 5, "the two left and the three of the new wake")
        #expect(try await Self.disconnectReason(disconnects) == "org.bluez.Reason.Remote")
        #expect(first + rest == (await fixture.simulator.takenRecords(of: Self.cuff)))
        #expect(await fixture.simulator.queuedRecordCount(of: Self.cuff) == 0)
        #expect(try await fixture.counter("RecordsDelivered", Self.cuff) == 6)
        #expect(try await fixture.counter("RecordsTaken", Self.cuff) == 6)
        await fixture.stop()
    }

    // MARK: - The clock

    static func timestamp(_ record: [UInt8]) throws -> DateTime {
        try #require(try BloodPressureMeasurement.decode(record).timestamp)
    }

    @Test("records carry the device clock's wrong time until Current Time is written, then the written time")
    func currentTimeWriteSetsTheClock() async throws {
        let scenario = Scenario(
            seed: 29, adapters: [AdapterSpec(name: "hci0", slots: 5)],
            devices: [DeviceSpec(kind: .bloodPressureCuff, address: Self.cuff, bonded: true)])
        let fixture = try await SimulatorFixture.start(scenario)
        let device = try #require(await fixture.simulator.devicePath(of: Self.cuff))
        try await fixture.call(device, "org.bluez.Device1", "Connect")
        let measurement = try await fixture.characteristic(Self.bloodPressureMeasurementUUID, of: device)
        let clock = try await fixture.characteristic(Self.currentTimeUUID, of: device)
        let changes = try await fixture.signals(path: measurement, interface: propertiesInterface, member: "PropertiesChanged")
        try await fixture.call(measurement, "org.bluez.GattCharacteristic1", "StartNotify")
        await fixture.simulator.wake(address: Self.cuff)
        for record in try await Self.values(changes, count: 3, "records before the clock is set") {
            let stamp = try Self.timestamp(record)
            #expect((stamp.year, stamp.month, stamp.day, stamp.hours) == (2020, 1, 1, 0))
        }

        let written = CurrentTime(
            dateTime: DateTime(year: 2024, month: 6, day: 15, hours: 10, minutes: 30, seconds: 0), dayOfWeek: .saturday,
            adjustReason: .manualTimeUpdate)
        try await fixture.call(clock, "org.bluez.GattCharacteristic1", "WriteValue", [.bytes(written.encode()), .stringVariantMap([:])])
        #expect(try await fixture.counter("ClockWrites", Self.cuff) == 1)
        guard case .dictionary(_, _, let last)? = try await fixture.counters()["LastClockWritten"] else {
            throw ExpectationFailed(description: "no LastClockWritten")
        }
        #expect(last.first { $0.key == .string(Self.cuff) }?.value == .bytes(written.encode()))
        let read = try await fixture.call(clock, "org.bluez.GattCharacteristic1", "ReadValue", [.stringVariantMap([:])])
        let now = try CurrentTime.decode(try read.decode([UInt8].self, at: 0))
        #expect((now.dateTime.year, now.dateTime.month, now.dateTime.day, now.dayOfWeek) == (2024, 6, 15, .saturday))

        await fixture.simulator.wake(address: Self.cuff)
        for record in try await Self.values(changes, count: 3, "records after the clock is set") {
            let stamp = try Self.timestamp(record)
            #expect((stamp.year, stamp.month, stamp.day, stamp.hours) == (2024, 6, 15, 10))
            #expect((30...31).contains(stamp.minutes))
        }
        await fixture.stop()
    }

    @Test("an invalid Current Time write fails as bluetoothd words the device's ATT error, and leaves the clock")
    func invalidCurrentTimeWrite() async throws {
        let scenario = Scenario(
            seed: 29, adapters: [AdapterSpec(name: "hci0", slots: 5)],
            devices: [DeviceSpec(kind: .bloodPressureCuff, address: Self.cuff, bonded: true)])
        let fixture = try await SimulatorFixture.start(scenario)
        let device = try #require(await fixture.simulator.devicePath(of: Self.cuff))
        try await fixture.call(device, "org.bluez.Device1", "Connect")
        let clock = try await fixture.characteristic(Self.currentTimeUUID, of: device)
        let dateOnly = DateTime(year: 2024, month: 6, day: 15, hours: 10, minutes: 30, seconds: 0).encode()
        _ = try await expectError("org.bluez.Error.InvalidArguments", "Invalid Length") {
            try await fixture.call(clock, "org.bluez.GattCharacteristic1", "WriteValue", [.bytes(dateOnly), .stringVariantMap([:])])
        }
        let thirteenthMonth = CurrentTime(
            dateTime: DateTime(year: 2024, month: 13, day: 1, hours: 0, minutes: 0, seconds: 0), dayOfWeek: .unknown)
        _ = try await expectError("org.bluez.Error.Failed", "Operation failed with ATT error: 0x80") {
            try await fixture.call(
                clock, "org.bluez.GattCharacteristic1", "WriteValue", [.bytes(thirteenthMonth.encode()), .stringVariantMap([:])])
        }
        #expect(try await fixture.counter("ClockWrites", Self.cuff) == 0)
        let read = try await fixture.call(clock, "org.bluez.GattCharacteristic1", "ReadValue", [.stringVariantMap([:])])
        #expect(try CurrentTime.decode(try read.decode([UInt8].self, at: 0)).dateTime.year == 2020)
        await fixture.stop()
    }

    // MARK: - Scenarios

    @Test("bluez-sim's measurement scenario runs a cuff and a scale with their defaults")
    func measurementScenarioFile() async throws {
        let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
        let scenario = try Scenario.load(from: root.appendingPathComponent("scenarios/measurement-devices.json"))
        let (_, devices) = try scenario.resolved()
        let cuff = try #require(devices.first { $0.kind == .bloodPressureCuff })
        let scale = try #require(devices.first { $0.kind == .weightScale })
        #expect(cuff.pairing == .passkey && scale.pairing == .justWorks)
        #expect(cuff.requiresEncryption && scale.requiresEncryption)
        #expect(cuff.wake != nil && scale.wake != nil)
        #expect(cuff.records == 3)
        let fixture = try await SimulatorFixture.start(scenario)
        #expect(await fixture.simulator.isAwake(address: cuff.address) == false)
        await fixture.stop()
        // Only the measurement kinds sleep.
        let sleepyStrap = Scenario(devices: [DeviceSpec(kind: .heartRateStrap, wake: WakeSchedule())])
        #expect(throws: ScenarioError.self) { try sleepyStrap.resolved() }
    }
}
