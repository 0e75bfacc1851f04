import BlueZ
import BlueZSimulator
import Fleet
import FleetCore
import GATT
import Synchronization
import Testing
import TestSupport

/// The fleet's commands (`FleetCommands`) against the simulated bluetoothd, in-process.
@Suite("Fleet commands against the simulated bluetoothd")
struct FleetCommandsSimulatorTests {
    static let strapAddress = "AA:BB:CC:00:50:01"
    static let spareAddress = "AA:BB:CC:00:50:02"
    static let bodySensorLocation = "00002a38-0000-1000-8000-00805f9b34fb"
    static let batteryLevel = "00002a19-0000-1000-8000-00805f9b34fb"

    /// One pinned strap (ready when this returns) and one spare strap nobody asked for.
    static func start(seed: UInt64) async throws -> (FleetSimulatorFixture, strap: DeviceID, spare: DeviceID) {
        let scenario = Scenario(
            seed: seed, adapters: [AdapterSpec(name: "hci0", slots: 5)],
            devices: [
                DeviceSpec(kind: .heartRateStrap, address: strapAddress, addressType: "public", bonded: true),
                DeviceSpec(kind: .heartRateStrap, address: spareAddress, addressType: "public", bonded: true),
            ])
        let strap = try FleetSimulatorFixture.id(strapAddress)
        let spare = try FleetSimulatorFixture.id(spareAddress)
        let configuration = FleetRuntimeConfiguration(
            pinned: [FleetRuntimeConfiguration.PinnedDevice(id: strap, className: "strap")],
            classes: ["strap": FleetSimulatorFixture.strapClass(), "default": DeviceStateMachine.Configuration()],
            pool: PoolConfiguration(maxConnections: 4))
        let fleet = try await FleetSimulatorFixture.start(scenario, configuration, seed: seed)
        try await fleet.waitForStatus("the strap to be ready") { $0.pinnedReady == 1 }
        return (fleet, strap, spare)
    }

    @Test func aRuntimePinBecomesReadyAndUnpinningForgetsIt() async throws {
        let (fleet, _, spare) = try await Self.start(seed: 51)
        try await fleet.orchestrator.pin(spare, options: FleetPinOptions(className: "strap", priority: 5, name: "spare strap"))
        let status = try await fleet.waitForStatus("the pinned spare to be ready") { $0.pinnedReady == 2 }
        let device = try #require(status.devices.first { $0.id == spare })
        #expect(device.pinned && device.name == "spare strap" && device.className == "strap")
        // Pinning it twice is refused and changes nothing.
        await #expect(throws: FleetCommandError.alreadyPinned(spare)) {
            try await fleet.orchestrator.pin(spare, options: FleetPinOptions(className: "strap"))
        }
        try await fleet.orchestrator.unpin(spare)
        // The pool is off: the device leaves the fleet and its link is released.
        try await fleet.waitForStatus("the spare to be forgotten") { status in !status.devices.contains { $0.id == spare } }
        let released = await fleet.client.waitForTree(timeout: .seconds(10)) { tree in
            tree.devices(spare).allSatisfy { !$0.connected }
        }
        #expect(released, "its link was released")
        await fleet.stop()
    }

    @Test func badPinsAndUnpinsAreRefusedAndChangeNothing() async throws {
        let (fleet, strap, spare) = try await Self.start(seed: 52)
        let before = await fleet.orchestrator.status().devices.map(\.id)
        await #expect(throws: FleetCommandError.unknownClass("nonesuch")) {
            try await fleet.orchestrator.pin(spare, options: FleetPinOptions(className: "nonesuch"))
        }
        await #expect(throws: FleetCommandError.pinnedByConfiguration(strap, definedAt: nil)) { try await fleet.orchestrator.unpin(strap) }
        await #expect(throws: FleetCommandError.pinnedByConfiguration(strap, definedAt: nil)) {
            try await fleet.orchestrator.pin(strap, options: FleetPinOptions(className: "strap"))
        }
        await #expect(throws: FleetCommandError.unknownDevice(spare)) { try await fleet.orchestrator.unpin(spare) }
        await #expect(throws: FleetCommandError.unknownDevice(spare)) { try await fleet.orchestrator.disconnect(spare) }
        await #expect(throws: FleetCommandError.unknownDevice(spare)) { try await fleet.orchestrator.reconnect(spare) }
        #expect(await fleet.orchestrator.status().devices.map(\.id) == before)
        #expect(await fleet.orchestrator.status().pinnedReady == 1)
        await fleet.stop()
    }

    @Test func disconnectHoldsTheDeviceAndReconnectBringsItBack() async throws {
        let (fleet, strap, _) = try await Self.start(seed: 53)
        let sessionBefore = try #require(await fleet.orchestrator.status().devices.first { $0.id == strap }?.sessions)
        try await fleet.orchestrator.disconnect(strap)
        try await fleet.waitForStatus("the strap to be idle") { $0.devices.first { $0.id == strap }?.state == .idle }
        let released = await fleet.client.waitForTree(timeout: .seconds(10)) { tree in
            tree.devices(strap).allSatisfy { !$0.connected }
        }
        #expect(released, "the link was released")
        try await fleet.orchestrator.reconnect(strap)
        let status = try await fleet.waitForStatus("the strap to be ready again") { $0.pinnedReady == 1 }
        #expect((status.devices.first { $0.id == strap }?.sessions ?? 0) > sessionBefore, "a new connection session")
        await fleet.stop()
    }

    @Test func readAnswersTheValueAndRefusesWhatCannotBeRead() async throws {
        let (fleet, strap, spare) = try await Self.start(seed: 54)
        // 16-bit short forms are accepted; the simulator's strap sits on its chest (1).
        #expect(try await fleet.orchestrator.read(strap, characteristic: "2a38") == [1])
        #expect(try await fleet.orchestrator.read(strap, characteristic: Self.batteryLevel) == [87])
        await #expect(throws: FleetCommandError.invalidCharacteristic("not-a-uuid")) {
            _ = try await fleet.orchestrator.read(strap, characteristic: "not-a-uuid")
        }
        await #expect(throws: FleetCommandError.notPermitted(strap, FleetSimulatorFixture.heartRate, operation: "read")) {
            _ = try await fleet.orchestrator.read(strap, characteristic: FleetSimulatorFixture.heartRate)
        }
        let temperature = "00002a1c-0000-1000-8000-00805f9b34fb"
        await #expect(throws: FleetCommandError.unknownCharacteristic(strap, temperature)) {
            _ = try await fleet.orchestrator.read(strap, characteristic: temperature)
        }
        await #expect(throws: FleetCommandError.unknownDevice(spare)) {
            _ = try await fleet.orchestrator.read(spare, characteristic: Self.batteryLevel)
        }
        try await fleet.orchestrator.disconnect(strap)
        try await fleet.waitForStatus("the strap to be idle") { $0.devices.first { $0.id == strap }?.state == .idle }
        await #expect(throws: FleetCommandError.notConnected(strap)) {
            _ = try await fleet.orchestrator.read(strap, characteristic: Self.batteryLevel)
        }
        await fleet.stop()
    }

    /// bluetoothd announces every value it reads as a change of `Value` before it answers (so
    /// does the simulator): the fleet takes the value once, not once more from the answer.
    @Test func aReadIsOneValue() async throws {
        let (fleet, strap, _) = try await Self.start(seed: 56)
        let taken = Mutex(0)
        let tap = fleet.orchestrator.pipeline.tap { value in
            if value.device == strap, value.characteristic == Self.batteryLevel { taken.withLock { $0 += 1 } }
        }
        for expected in 1...3 {
            #expect(try await fleet.orchestrator.read(strap, characteristic: "2a19") == [87])
            // The announcement precedes the answer on the bus, so it was taken when read returned.
            #expect(taken.withLock { $0 } == expected)
        }
        // A level that changed unannounced: the read announces it once, as bluetoothd does,
        // whatever the exported value was.
        #expect(await fleet.simulator.setValue(address: Self.strapAddress, characteristic: BluetoothUUID.batteryLevel, bytes: [55]))
        #expect(try await fleet.orchestrator.read(strap, characteristic: "2a19") == [55])
        #expect(taken.withLock { $0 } == 4)
        fleet.orchestrator.pipeline.untap(tap)
        await fleet.stop()
    }

    /// What the radio hears that the fleet does not manage: the spare strap, heard advertising,
    /// and not the pinned one.
    @Test func nearbyListsTheDevicesOutsideTheFleet() async throws {
        let (fleet, strap, spare) = try await Self.start(seed: 57)
        // Every device is where the fleet wants it, so the fleet does not discover: a bounded
        // scan hears the spare advertising.
        let nearby = await fleet.orchestrator.nearby(scanning: .seconds(2))
        #expect(!nearby.contains { $0.id == strap }, "a fleet device is not nearby")
        let heard = try #require(nearby.first { $0.id == spare })
        #expect(heard.rssi != nil && heard.adapters == [AdapterID("hci0")] && !heard.connected)
        #expect(heard.services.contains(FleetSimulatorFixture.heartRateService))
        #expect(heard.poolClass == nil, "the pool is off")
        await fleet.stop()
    }

    @Test func unsubscribingStopsNotificationsAndSubscribingStartsThemAgain() async throws {
        let (fleet, strap, _) = try await Self.start(seed: 55)
        let heartRate = FleetSimulatorFixture.heartRate
        func notifying(_ expected: Bool) async -> Bool {
            await fleet.client.waitForTree(timeout: .seconds(10)) { tree in
                guard let object = tree.devices(strap).first(where: \.connected) else { return false }
                return tree.characteristics(of: object.path).first { $0.uuid == heartRate }?.notifying == expected
            }
        }
        #expect(await notifying(true))
        try await fleet.orchestrator.unsubscribe(strap, characteristic: heartRate)
        #expect(await notifying(false), "StopNotify reached bluetoothd")
        await #expect(throws: FleetCommandError.notSubscribed(strap, heartRate)) {
            try await fleet.orchestrator.unsubscribe(strap, characteristic: heartRate)
        }
        #expect(await fleet.orchestrator.status().pinnedReady == 1, "a device with fewer subscriptions is still ready")
        try await fleet.orchestrator.subscribe(strap, characteristic: "2a37")
        #expect(await notifying(true), "StartNotify reached bluetoothd")
        await #expect(throws: FleetCommandError.alreadySubscribed(strap, heartRate)) {
            try await fleet.orchestrator.subscribe(strap, characteristic: heartRate)
        }
        await #expect(throws: FleetCommandError.notPermitted(strap, Self.bodySensorLocation, operation: "notify")) {
            try await fleet.orchestrator.subscribe(strap, characteristic: Self.bodySensorLocation)
        }
        try await fleet.waitForStatus("the strap to be ready with its subscription back") { $0.pinnedReady == 1 }
        await fleet.stop()
    }
}
