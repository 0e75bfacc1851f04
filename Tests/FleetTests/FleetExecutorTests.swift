import Fleet
import FleetCore
import Foundation
import Logging
import Testing
import TestSupport

/// The executor (`FleetOrchestrator`) on a fake bluetoothd: start, restore, admission, reload and
/// bluetoothd's vanishing and return carried out end to end, with no dbus-daemon.
@Suite("FleetOrchestrator on a fake bluetoothd")
struct FleetExecutorTests {
    static let hci0 = AdapterID("hci0")
    static let hci1 = AdapterID("hci1")
    static let heartRateService = "0000180d-0000-1000-8000-00805f9b34fb"
    static let heartRate = "00002a37-0000-1000-8000-00805f9b34fb"

    struct Fleet {
        let bluetooth: FakeBluetooth
        let orchestrator: FleetOrchestrator
        let changes: AsyncStream<(DeviceID, DeviceState)>

        @discardableResult
        func waitForStatus(_ what: String, _ condition: @escaping @Sendable (FleetStatus) -> Bool) async throws -> FleetStatus {
            let orchestrator = self.orchestrator
            let changes = self.changes
            return try await withTimeout(.seconds(60), what) {
                let now = await orchestrator.status()
                if condition(now) { return now }
                for await _ in changes {
                    let status = await orchestrator.status()
                    if condition(status) { return status }
                }
                throw CancellationError()
            }
        }
    }

    static func device(_ last: UInt8) -> DeviceID {
        guard let address = BluetoothAddress(bytes: [0xC0, 0xFF, 0xEE, 0, 0, last]) else { fatalError("six bytes make an address") }
        return DeviceID(address: address)
    }

    static func strapClass() -> DeviceStateMachine.Configuration {
        var strap = DeviceStateMachine.Configuration()
        strap.requiredServices = [heartRateService]
        strap.subscriptions = [heartRate]
        return strap
    }

    static func configuration(pinned: [DeviceID], pool: Bool = false) -> FleetRuntimeConfiguration {
        FleetRuntimeConfiguration(
            pinned: pinned.map { FleetRuntimeConfiguration.PinnedDevice(id: $0, className: "strap") },
            classes: ["strap": strapClass(), "default": DeviceStateMachine.Configuration()], poolClassName: "strap", poolEnabled: pool,
            pool: PoolConfiguration(maxConnections: 8, defaultSlotsPerAdapter: 4))
    }

    static func start(_ configuration: FleetRuntimeConfiguration, restored: [KnownDevice] = []) async throws -> Fleet {
        let bluetooth = FakeBluetooth(services: [heartRateService], characteristics: [heartRate])
        let logger = Logger(label: "executor-test") { _ in SwiftLogNoOpLogHandler() }
        let orchestrator = FleetOrchestrator(
            configuration: configuration, bluetooth: bluetooth, pipeline: ValuePipeline(logger: logger), logger: logger, seed: 7)
        await orchestrator.restore(restored)
        let changes = orchestrator.stateChanges
        try await orchestrator.start()
        return Fleet(bluetooth: bluetooth, orchestrator: orchestrator, changes: changes)
    }

    @Test func pinnedDevicesBluetoothdHoldsBecomeReadyThroughGrants() async throws {
        let strap = Self.device(1), watch = Self.device(2)
        let fleet = try await Self.start(Self.configuration(pinned: [strap, watch]))
        fleet.bluetooth.appear(
            adapters: [Self.hci0], objects: [strap: [.init(adapter: Self.hci0, rssi: -50)], watch: [.init(adapter: Self.hci0, rssi: -60)]])
        try await fleet.waitForStatus("both ready") { $0.pinnedReady == 2 }
        let calls = fleet.bluetooth.calls
        #expect(calls.contains("addAdapter hci0"))
        #expect(calls.filter { $0.hasPrefix("connect") }.count == 2, "one granted attempt each: \(calls)")
        await fleet.orchestrator.stop()
        let released = Set(fleet.bluetooth.calls.filter { $0.hasPrefix("disconnect") })
        #expect(released == ["disconnect \(strap.address)", "disconnect \(watch.address)"], "the links the daemon made are released")
    }

    @Test func aRestoredDeviceBluetoothdForgotIsConnectedOnItsLastAdapter() async throws {
        let strap = Self.device(3)
        let known = KnownDevice(id: strap, adapter: Self.hci1, servicesSeen: [Self.heartRateService], membership: .pinned)
        let fleet = try await Self.start(Self.configuration(pinned: [strap]), restored: [known])
        fleet.bluetooth.appear(adapters: [Self.hci0, Self.hci1])
        try await fleet.waitForStatus("the strap ready") { $0.pinnedReady == 1 }
        #expect(fleet.bluetooth.calls.contains("connect \(strap.address) hci1"), "its last adapter, without a discovery")
        #expect(!fleet.bluetooth.calls.contains { $0.hasPrefix("discovery") }, "no discovery for a device it can connect by address")
        await fleet.orchestrator.stop()
    }

    @Test func bluetoothdVanishingSuspendsEveryDeviceAndItsReturnBringsThemBack() async throws {
        let strap = Self.device(4)
        let fleet = try await Self.start(Self.configuration(pinned: [strap]))
        let objects: [DeviceID: [FleetStateMachine.DeviceObject]] = [strap: [.init(adapter: Self.hci0)]]
        fleet.bluetooth.appear(adapters: [Self.hci0], objects: objects)
        try await fleet.waitForStatus("ready") { $0.pinnedReady == 1 }
        fleet.bluetooth.vanish()
        let gone = try await fleet.waitForStatus("suspended") { $0.devices.first?.state == .suspended(.bluetoothdUnavailable) }
        #expect(!gone.bluetoothdPresent)
        #expect(gone.adapters.allSatisfy { !$0.powered })
        fleet.bluetooth.appear(adapters: [Self.hci0], objects: objects)
        try await fleet.waitForStatus("ready again") { $0.pinnedReady == 1 && $0.bluetoothdPresent }
        await fleet.orchestrator.stop()
    }

    @Test func aReloadPinsAndUnpinsWithoutTouchingOtherLinks() async throws {
        let strap = Self.device(5), spare = Self.device(6)
        let fleet = try await Self.start(Self.configuration(pinned: [strap]))
        fleet.bluetooth.appear(
            adapters: [Self.hci0], objects: [strap: [.init(adapter: Self.hci0)], spare: [.init(adapter: Self.hci0, name: "Spare")]])
        try await fleet.waitForStatus("the strap ready") { $0.pinnedReady == 1 }
        let summary = await fleet.orchestrator.reconfigure(Self.configuration(pinned: [strap, spare]))
        #expect(summary.pinnedAdded == [spare])
        let both = try await fleet.waitForStatus("both ready") { $0.pinnedReady == 2 }
        #expect(both.devices.first { $0.id == spare }?.name == "Spare", "named as it advertises")
        let strapConnects = fleet.bluetooth.calls.filter { $0 == "connect \(strap.address) hci0" }.count
        let unpinned = await fleet.orchestrator.reconfigure(Self.configuration(pinned: [strap]))
        #expect(unpinned.pinnedRemoved == [spare])
        try await fleet.waitForStatus("the spare forgotten") { $0.devices.map(\.id) == [strap] }
        #expect(fleet.bluetooth.calls.contains("disconnect \(spare.address)"))
        #expect(fleet.bluetooth.calls.filter { $0 == "connect \(strap.address) hci0" }.count == strapConnects, "the strap's link untouched")
        await fleet.orchestrator.stop()
    }

    @Test func disconnectAnswersOnceBluetoothdReportedTheLinkGone() async throws {
        let strap = Self.device(9)
        let fleet = try await Self.start(Self.configuration(pinned: [strap]))
        fleet.bluetooth.appear(adapters: [Self.hci0], objects: [strap: [.init(adapter: Self.hci0)]])
        try await fleet.waitForStatus("the strap ready") { $0.pinnedReady == 1 }
        try await fleet.orchestrator.disconnect(strap)
        #expect(fleet.bluetooth.calls.contains("disconnect \(strap.address)"))
        let after = await fleet.orchestrator.status()
        #expect(after.devices.first { $0.id == strap }?.adapter == nil, "no link on the books once it answered")
        // Not linked any more: answered at once.
        try await fleet.orchestrator.disconnect(strap)
        await fleet.orchestrator.stop()
    }

    @Test func aPinOrUnpinThatCannotBeSavedIsUndone() async throws {
        let strap = Self.device(7), spare = Self.device(8)
        let fleet = try await Self.start(Self.configuration(pinned: [strap]))
        fleet.bluetooth.appear(
            adapters: [Self.hci0], objects: [strap: [.init(adapter: Self.hci0)], spare: [.init(adapter: Self.hci0, name: "Spare")]])
        try await fleet.waitForStatus("the strap ready") { $0.pinnedReady == 1 }
        // A state "directory" that is a regular file: every save fails.
        let blocker = FileManager.default.temporaryDirectory.appendingPathComponent("wearfleet-pins-\(UUID().uuidString)")
        try Data().write(to: blocker)
        defer { try? FileManager.default.removeItem(at: blocker) }
        let logger = Logger(label: "executor-test") { _ in SwiftLogNoOpLogHandler() }
        await fleet.orchestrator.keepRuntimePins(in: RuntimePinsFile(directory: blocker, logger: logger))

        await #expect(throws: FleetCommandError.self) { try await fleet.orchestrator.pin(spare, options: FleetPinOptions(className: "strap")) }
        #expect(await fleet.orchestrator.runtimePins.isEmpty, "the pin was undone")
        #expect(await fleet.orchestrator.status().devices.first { $0.id == spare }?.pinned != true)

        // A pin that was saved, then an unpin that cannot be: the pin stays, as it was.
        let writable = FileManager.default.temporaryDirectory.appendingPathComponent("wearfleet-pins-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: writable, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: writable) }
        await fleet.orchestrator.keepRuntimePins(in: RuntimePinsFile(directory: writable, logger: logger))
        try await fleet.orchestrator.pin(spare, options: FleetPinOptions(className: "strap", priority: 3, name: "Kept"))
        await fleet.orchestrator.keepRuntimePins(in: RuntimePinsFile(directory: blocker, logger: logger))
        await #expect(throws: FleetCommandError.self) { try await fleet.orchestrator.unpin(spare) }
        let kept = await fleet.orchestrator.runtimePins
        #expect(kept.map(\.id) == [spare] && kept.first?.priority == 3 && kept.first?.name == "Kept" && kept.first?.className == "strap")
        await fleet.orchestrator.stop()
    }

    @Test func pinsMadeAtOnceAreEachSavedWithTheOthers() async throws {
        let fleet = try await Self.start(Self.configuration(pinned: []))
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("wearfleet-pins-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let logger = Logger(label: "executor-test") { _ in SwiftLogNoOpLogHandler() }
        await fleet.orchestrator.keepRuntimePins(in: RuntimePinsFile(directory: directory, logger: logger))
        let devices = (30..<40).map { Self.device(UInt8($0)) }
        try await withThrowingTaskGroup(of: Void.self) { group in
            for device in devices { group.addTask { try await fleet.orchestrator.pin(device, options: FleetPinOptions(className: "strap")) } }
            try await group.waitForAll()
        }
        let saved = await RuntimePinsFile(directory: directory, logger: logger).load()
        #expect(saved.map(\.id) == devices.sorted(), "every answered pin is on disk")
        await fleet.orchestrator.stop()
    }

    @Test func aPinWhoseSaveFailsLeavesAPoolDeviceAsItWasHeldClassAndAll() async throws {
        var configuration = Self.configuration(pinned: [], pool: true)
        configuration.poolAdmission = PoolAdmission(namePrefixes: ["HRM"], minimumRSSI: -90, defaultClass: "strap", defaultPriority: 4)
        let fleet = try await Self.start(configuration)
        fleet.bluetooth.appear(adapters: [Self.hci0])
        let candidate = Self.device(11)
        fleet.bluetooth.add(.init(adapter: Self.hci0, name: "HRM 11", rssi: -50), for: candidate)
        try await fleet.waitForStatus("the candidate connected") { $0.poolConnected == 1 }
        try await fleet.orchestrator.disconnect(candidate)
        let held = await fleet.orchestrator.status().devices.first { $0.id == candidate }

        let blocker = FileManager.default.temporaryDirectory.appendingPathComponent("wearfleet-pins-\(UUID().uuidString)")
        try Data().write(to: blocker)
        defer { try? FileManager.default.removeItem(at: blocker) }
        let logger = Logger(label: "executor-test") { _ in SwiftLogNoOpLogHandler() }
        await fleet.orchestrator.keepRuntimePins(in: RuntimePinsFile(directory: blocker, logger: logger))
        let events = EventLog()
        await fleet.orchestrator.addObserver(events)
        await #expect(throws: FleetCommandError.self) {
            try await fleet.orchestrator.pin(candidate, options: FleetPinOptions(className: "default", priority: 9))
        }
        // Nothing was applied, so nothing was undone: no pin, no unpin, not a single event.
        #expect(events.all.isEmpty, "\(events.all)")
        #expect(await fleet.orchestrator.runtimePins.isEmpty)
        let after = await fleet.orchestrator.status().devices.first { $0.id == candidate }
        #expect(after?.pinned == false && after?.className == held?.className && after?.state == held?.state)
        await fleet.orchestrator.stop()
    }

    @Test func anAdmittedPoolCandidateIsConnectedAndAnIneligibleOneIgnored() async throws {
        var configuration = Self.configuration(pinned: [], pool: true)
        configuration.poolAdmission = PoolAdmission(namePrefixes: ["HRM"], minimumRSSI: -90, defaultClass: "strap")
        let fleet = try await Self.start(configuration)
        fleet.bluetooth.appear(adapters: [Self.hci0])
        let candidate = Self.device(7), stranger = Self.device(8)
        fleet.bluetooth.add(.init(adapter: Self.hci0, name: "Watch", rssi: -40), for: stranger)
        fleet.bluetooth.add(.init(adapter: Self.hci0, name: "HRM 7", rssi: -50), for: candidate)
        let status = try await fleet.waitForStatus("the candidate connected") { $0.poolConnected == 1 }
        #expect(status.devices.map(\.id) == [candidate])
        #expect(fleet.bluetooth.calls.contains("discovery hci0 start"), "the pool looked for candidates while it had room")
        await fleet.orchestrator.stop()
    }

    @Test func aPoolDeviceThatLeavesTheFleetIsForgottenByTheValuePipeline() async throws {
        var configuration = Self.configuration(pinned: [], pool: true)
        configuration.poolAdmission = PoolAdmission(namePrefixes: ["HRM"], minimumRSSI: -90, defaultClass: "strap")
        let fleet = try await Self.start(configuration)
        fleet.bluetooth.appear(adapters: [Self.hci0])
        let candidate = Self.device(12)
        fleet.bluetooth.add(.init(adapter: Self.hci0, name: "HRM 12", rssi: -50), for: candidate)
        try await fleet.waitForStatus("the candidate connected") { $0.poolConnected == 1 }
        let pipeline = fleet.orchestrator.pipeline
        pipeline.ingest(device: candidate, characteristic: Self.heartRate, bytes: [0x00, 71])
        #expect(pipeline.counters(for: candidate).notifications == 1)
        #expect(pipeline.deviceCount == 1)
        // The pool is turned off: the candidate leaves the fleet, and the pipeline keeps nothing of it.
        let summary = await fleet.orchestrator.reconfigure(Self.configuration(pinned: []))
        #expect(summary.poolReleased == [candidate])
        #expect(pipeline.deviceCount == 0)
        #expect(pipeline.counters(for: candidate).notifications == 0)
        await fleet.orchestrator.stop()
    }

    @Test func theActivityFeedCarriesFleetEventsAndValuesWithTheirBytes() async throws {
        let strap = Self.device(9)
        let fleet = try await Self.start(Self.configuration(pinned: [strap]))
        let feed = fleet.orchestrator.activity()
        fleet.bluetooth.appear(adapters: [Self.hci0], objects: [strap: [.init(adapter: Self.hci0)]])
        try await fleet.waitForStatus("ready") { $0.pinnedReady == 1 }
        fleet.orchestrator.pipeline.ingest(device: strap, characteristic: Self.heartRate, bytes: [0x00, 72])
        let (sawReady, value) = try await withTimeout(.seconds(10), "a state change and a value") {
            var sawReady = false
            for await activity in feed {
                switch activity {
                case .fleet(.lifecycle(strap, .stateChanged(_, .ready, _, _), _, _)): sawReady = true
                case .value(let value) where sawReady: return (sawReady, value)
                default: continue
                }
            }
            throw CancellationError()
        }
        #expect(sawReady)
        #expect(value.device == strap && value.characteristic == Self.heartRate && value.bytes == [0x00, 72])
        #expect(feed.dropped == 0)
        await fleet.orchestrator.stop()
    }

    @Test func aFeedNobodyReadsDropsItsOldestAndCountsThemWithoutHoldingIngest() async throws {
        let strap = Self.device(10)
        let fleet = try await Self.start(Self.configuration(pinned: [strap]))
        // Settled (no bluetoothd), so no fleet event comes while the values are ingested.
        try await fleet.waitForStatus("the strap waiting for bluetoothd") {
            $0.devices.first?.state == .suspended(.bluetoothdUnavailable)
        }
        let stalled = fleet.orchestrator.activity(bufferingNewest: 8)
        let before = fleet.orchestrator.pipeline.counters(for: strap).notifications
        for beat in 0..<200 {
            fleet.orchestrator.pipeline.ingest(device: strap, characteristic: Self.heartRate, bytes: [0x00, UInt8(60 + beat % 60)])
        }
        // Ingest went on: every value was decoded and counted, whatever the feed holds.
        #expect(fleet.orchestrator.pipeline.counters(for: strap).notifications == before + 200)
        #expect(stalled.dropped == 192, "all but the newest 8 were dropped for this consumer")
        let kept = try await withTimeout(.seconds(10), "the 8 kept values") {
            var kept: [[UInt8]] = []
            for await activity in stalled {
                if case .value(let value) = activity { kept.append(value.bytes) }
                if kept.count == 8 { break }
            }
            return kept
        }
        #expect(kept == (192..<200).map { [0x00, UInt8(60 + $0 % 60)] }, "the newest are the ones kept, in order")
        await fleet.orchestrator.stop()
    }
}
