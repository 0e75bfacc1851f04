import FleetCore
import FleetReplay
import Foundation
import GATT
import Testing

/// Every input the machines take survives the journal: what `json()` writes, `init(json:)`
/// reads back equal. The kind lists are exhaustive switches, so a new case fails to compile here
/// until it has an example.
@Suite("Recorded inputs: the JSON round trip")
struct RecordedInputCodingTests {
    static let strap = DeviceID(address: BluetoothAddress("AA:BB:CC:00:00:01")!)
    static let band = DeviceID(address: BluetoothAddress("AA:BB:CC:00:00:02")!, addressType: .random)
    static let hci0 = AdapterID("hci0")
    static let hci1 = AdapterID("hci1")
    static let heartRate = "00002a37-0000-1000-8000-00805f9b34fb"
    static let failure = DeviceEvent.Failure(name: "org.bluez.Error.Failed", message: "le-connection-abort-by-local")

    /// A configuration that sets every part: classes, writes, pool admission and rules, slots,
    /// budgets, adapters and the scan filter.
    static var configuration: FleetRuntimeConfiguration {
        var strapClass = DeviceStateMachine.Configuration(
            requiredServices: ["0000180d-0000-1000-8000-00805f9b34fb"], readOnConnect: [heartRate], subscriptions: [heartRate],
            useFileDescriptorPath: true, timeouts: DeviceStateMachine.Timeouts(connect: .milliseconds(2_500)), writeFailureThreshold: 4)
        strapClass.requiredCharacteristics = [heartRate]
        var cuffClass = DeviceStateMachine.Configuration(
            subscriptions: ["00002a35-0000-1000-8000-00805f9b34fb"],
            timeouts: DeviceStateMachine.Timeouts(pairing: .seconds(12)), bond: true, intermittent: true, setTime: true)
        cuffClass.requiredServices = ["00001810-0000-1000-8000-00805f9b34fb"]
        var configuration = FleetRuntimeConfiguration(
            pinned: [FleetRuntimeConfiguration.PinnedDevice(id: strap, name: "Strap", className: "strap", priority: 3)],
            classes: ["strap": strapClass, "cuff": cuffClass, "default": DeviceStateMachine.Configuration()], poolClassName: "default",
            poolEnabled: true,
            poolServiceFilter: ["0000180d-0000-1000-8000-00805f9b34fb"],
            pool: PoolConfiguration(
                maxConnections: 7, slotOverrides: [hci1: 2], minimumDwell: .seconds(5), scoreMargin: 2.5,
                weights: PoolScoreWeights(priority: 3, rssi: 0.5, recentFailures: 1.25),
                attemptRateLimit: AttemptRateLimit(burst: 2, refillInterval: .milliseconds(125))),
            reconnect: ReconnectPolicy(baseDelay: .milliseconds(100), budgets: [.transient: 3, .gone: 1], giveUpClasses: [.denied, .protocol]),
            adapters: [hci0, hci1], scanUUIDs: ["0000180d-0000-1000-8000-00805f9b34fb"], minimumRSSI: -90, disconnectOnStop: false)
        configuration.writes["strap"] = FleetRuntimeConfiguration.WriteSettings(
            options: OutgoingDeviceOptions(coalescingWindow: .milliseconds(20), queueCapacities: [.control: 4, .bulk: 64], maxInFlightWithResponse: 2),
            defaultQoS: .bulk)
        configuration.poolAdmission = PoolAdmission(
            namePrefixes: ["Band"], services: [BluetoothUUID(0x180D)], minimumRSSI: -80, defaultClass: "default", defaultPriority: 1,
            rules: [PoolRule(namePrefix: "Band-X", service: BluetoothUUID(0x180F), priority: 5, className: "strap")])
        return configuration
    }

    static let objects = [
        FleetStateMachine.DeviceObject(adapter: hci0, name: "Band \"7\" ✓", services: [heartRate], rssi: -61, connected: true),
        FleetStateMachine.DeviceObject(adapter: hci1, paired: true),
    ]

    // MARK: - Examples of every kind

    static let fleetInputs: [FleetStateMachine.Input] = [
        .restore([
            FleetStateMachine.RestoredDevice(
                id: strap, membership: .pinned, name: "Strap", servicesSeen: [heartRate], lastAdapter: hci1, hasBeenReady: true),
            FleetStateMachine.RestoredDevice(id: band, membership: .pool),
        ]),
        .restoreRuntimePins([FleetRuntimeConfiguration.PinnedDevice(id: band, name: "Band", className: "strap", priority: 2)]),
        .start, .started, .stop,
        .bluetoothdAppeared(held: [strap, band], adapters: [hci0, hci1], powered: [hci1]), .bluetoothdVanished, .bluetoothdPresentAtStart,
        .adapterChanged(hci0, powered: true), .adapterPowerChanged(hci1, powered: false), .adapterRemoved(hci1),
        .device(band, .connected, objects: objects), .device(band, nil, objects: []),
        .deviceOutput(.lifecycle(strap, .stateChanged(from: .idle, to: .connecting(adapter: nil), session: 0, cause: nil))),
        .evaluate,
        .reload(configuration, objects: [strap: objects, band: []]),
        .command(.pin(band, FleetPinOptions(className: "strap", priority: 2, name: "Band"), objects: objects)),
        .discoveryFinished(hci1, number: 7, failure: DeviceEvent.Failure(.notReady, message: "Resource Not Ready")),
        .discoveryFinished(hci0, number: 8, failure: nil), .retryDiscovery, .scan(until: MonotonicInstant.zero.advanced(by: .seconds(5))),
        .ownershipGate(enabled: true), .ownershipDecided(band, linkAllowed: false), .pairingEnded(adapter: hci1),
    ]

    static let deviceEvents: [DeviceEvent] = [
        .adapterPowered(hci0), .adapterUnpowered(hci1), .bluetoothdAppeared, .bluetoothdVanished, .deviceFound(adapter: hci0),
        .deviceLost, .connected, .disconnected(nil), .disconnected(DeviceEvent.Failure(name: "org.bluez.Reason.Remote")),
        .connectFailed(failure), .connectNeedsDiscovery, .servicesResolved(services: ["0000180d-0000-1000-8000-00805f9b34fb"], characteristics: [heartRate]),
        .notificationsEnabled(characteristic: heartRate),
        .subscribeFailed(characteristic: heartRate, DeviceEvent.Failure(.notPermitted, message: "Notify not allowed")),
        .valueReceived(characteristic: heartRate), .readFailed(characteristic: heartRate, DeviceEvent.Failure(name: "com.example.Odd")),
        .writeStarted, .writeCompleted, .writeFailed(DeviceEvent.Failure(.timeout)), .writeCreditAvailable,
        .timeout(.backoff, generation: 41), .attemptGranted(adapter: hci1), .policyUpdated(wanted: false), .restoreRequested,
        .reconnectRequested, .subscriptionAdded(characteristic: heartRate), .subscriptionRemoved(characteristic: heartRate),
        .linkLossExplained(adapter: hci1, cause: .bluetoothdGone), .pairingKeyGiven,
    ]

    static let deviceOutputs: [DeviceOutput] = [
        .requestAttempt(strap), .withdrawAttemptRequest(strap), .attemptFinished(strap, adapter: hci0, outcome: .failed(.outOfSlots)),
        .persist(strap, DeviceEffect.StoreUpdate(servicesSeen: [heartRate], hasBeenReady: true, connectedNow: false)),
        .lifecycle(strap, .failed(.transient, error: failure, session: 3)),
        .value(strap, characteristic: heartRate, bytes: [0, 255, 7]), .resumeWrites(strap), .writeOutcome(strap, .writeCompleted),
        .resolving(strap, true), .resolving(band, false), .standingEnded(band, adapter: hci1),
    ]

    static let commands: [FleetCommand] = [
        .pin(band, FleetPinOptions(), objects: []), .unpin(band), .disconnect(strap), .reconnect(strap), .prepareRead(strap),
        .prepareWrite(strap), .subscribe(strap, characteristic: heartRate), .unsubscribe(strap, characteristic: heartRate),
    ]

    static let states: [DeviceState] = [
        .idle, .resolving, .connecting(adapter: hci0), .connecting(adapter: nil), .discovering, .ready,
        .degraded(.subscriptionsIncomplete(missing: [heartRate])), .degraded(.writesFailing),
        .backingOff(attempt: 2, deadline: MonotonicInstant(nanoseconds: 1_500_000_000)),
        .suspended(.bluetoothdUnavailable), .suspended(.noPoweredAdapter), .suspended(.circuitOpen(until: MonotonicInstant(nanoseconds: 9))),
        .suspended(.budgetExhausted(.busy, until: MonotonicInstant(nanoseconds: -3))), .suspended(.gaveUp(.denied)),
    ]

    static let effects: [DeviceEffect] = [
        .startResolve, .stopResolve, .requestAttempt, .withdrawAttemptRequest, .attemptFinished(adapter: hci0, outcome: .connected),
        .attemptFinished(adapter: hci0, outcome: .cancelled), .attemptFinished(adapter: hci1, outcome: .standing),
        .standingEnded(adapter: hci1), .pair, .writeCurrentTime, .connect(adapter: hci1), .cancelConnect, .disconnect, .awaitServices,
        .read(characteristic: heartRate), .subscribe(characteristic: heartRate, via: .acquireNotify),
        .unsubscribe(characteristic: heartRate, via: .startNotify), .resumeWrites,
        .scheduleTimer(.connect, generation: 7, deadline: MonotonicInstant(nanoseconds: 123_456_789_012)), .cancelTimer(.recovery),
        .persist(DeviceEffect.StoreUpdate(servicesSeen: [], hasBeenReady: false, connectedNow: true)),
        .emit(.stateChanged(from: .ready, to: .backingOff(attempt: 1, deadline: .zero), session: 2, cause: .transient)),
        .emit(.setupProblem(characteristic: heartRate, error: nil, session: 2)),
        .emit(.failureWithdrawn(.transient, cause: .adapterPoweredOff, session: 2)),
    ]

    // MARK: - Round trips

    @Test func everyFleetInputKindRoundTrips() throws {
        let inputs = Self.fleetInputs + Self.deviceOutputs.map { .deviceOutput($0) } + Self.commands.map { .command($0) }
            + Self.deviceEvents.map { .device(Self.band, $0, objects: Self.objects) }
        #expect(Set(inputs.map(Self.kind)) == Self.allFleetInputKinds)
        #expect(Set(Self.commands.map(Self.kind)).count == 8)
        #expect(Set(Self.deviceOutputs.map(Self.kind)).count == 10)
        for (index, input) in inputs.enumerated() {
            try Self.expectRoundTrip(RecordedInput(sequence: UInt64(index + 1), now: MonotonicInstant(nanoseconds: 5), kind: .fleetInput(input)))
        }
    }

    @Test func everyDeviceEventAndEffectRoundTrips() throws {
        #expect(Set(Self.deviceEvents.map(Self.kind)).count == 28, "one example of each of DeviceEvent's 28 cases")
        #expect(Set(Self.effects.map(Self.kind)).count == 20, "one example of each of DeviceEffect's 20 cases")
        for (index, event) in Self.deviceEvents.enumerated() {
            try Self.expectRoundTrip(RecordedInput(
                sequence: UInt64(index + 1), now: MonotonicInstant(nanoseconds: Int64(index) * 1_000_000_007),
                kind: .deviceEvent(Self.band, event, effects: Self.effects)))
        }
        let changes = Self.states.map { DeviceEffect.emit(.stateChanged(from: $0, to: $0, session: 1, cause: .gone)) }
        try Self.expectRoundTrip(RecordedInput(sequence: 9, now: .zero, kind: .deviceEvent(Self.strap, .connected, effects: changes)))
    }

    @Test func startsCreationsAndReconfigurationsRoundTrip() throws {
        let configuration = Self.configuration
        try Self.expectRoundTrip(RecordedInput(sequence: 0, now: MonotonicInstant(nanoseconds: .max), kind: .fleetStarted(configuration, seed: .max)))
        try Self.expectRoundTrip(RecordedInput(sequence: 0, now: .zero, kind: .deviceCreated(Self.band, seed: 0x0123_4567_89AB_CDEF)))
        let strapClass = try #require(configuration.classes["strap"])
        try Self.expectRoundTrip(RecordedInput(
            sequence: 4, now: .zero, kind: .deviceReconfigured(Self.strap, strapClass, configuration.reconnect)))
    }

    @Test func theRecordNamesItsMachineAndReadsAsPeopleWriteIt() throws {
        let record = RecordedInput(sequence: 3, now: MonotonicInstant(nanoseconds: 42), kind: .deviceCreated(Self.band, seed: 9))
        #expect(record.machineName == "AA:BB:CC:00:00:02/random")
        #expect(RecordedInput(sequence: 1, now: .zero, kind: .fleetInput(.evaluate)).machineName == "fleet")
        let json = try record.json()
        #expect(json.contains("\"AA:BB:CC:00:00:02/random\""), "identities are written as people read them: \(json)")
        #expect(json.contains("\"now\":42"), "now is monotonic nanoseconds: \(json)")
        #expect(!json.contains("\n"), "one journal field, one line")
        #expect(RecordingField.runIdentifier(seed: 0xAB) == "00000000000000ab")
    }

    @Test func aDamagedRecordsSettingsAreClampedAsTheDaemonWould() throws {
        // A hand-edited record cannot hand the machines settings their initializers refuse.
        let valid = try RecordedInput(sequence: 0, now: .zero, kind: .fleetStarted(Self.configuration, seed: 1)).json()
        let damaged = valid.replacingOccurrences(of: "\"burst\":2", with: "\"burst\":-5")
            .replacingOccurrences(of: "\"maxConnections\":7", with: "\"maxConnections\":-1")
            .replacingOccurrences(of: "\"writeFailureThreshold\":4", with: "\"writeFailureThreshold\":0")
        #expect(damaged != valid)
        guard case .fleetStarted(let configuration, _) = try RecordedInput(json: damaged).kind else {
            Issue.record("not a start")
            return
        }
        #expect(configuration.pool.attemptRateLimit.burst == 1)
        #expect(configuration.pool.maxConnections == 0)
        #expect(configuration.classes["strap"]?.writeFailureThreshold == 1)
    }

    @Test func identitiesThatDoNotParseDoNotDecode() throws {
        let valid = try RecordedInput(sequence: 1, now: .zero, kind: .deviceCreated(Self.strap, seed: 1)).json()
        #expect(throws: DecodingError.self) { try RecordedInput(json: valid.replacingOccurrences(of: "AA:BB:CC:00:00:01", with: "AA:BB:CC:00:00")) }
        #expect(throws: DecodingError.self) { try RecordedInput(json: valid.replacingOccurrences(of: "AA:BB:CC:00:00:01", with: "AA:BB:CC:00:00:01/odd")) }
        #expect(throws: (any Error).self) { try RecordedInput(json: "{\"kind\":{}}") }
        #expect(throws: (any Error).self) { try RecordedInput(json: "not json") }
    }

    @Test func anAppearanceRecordedBeforeItCarriedThePoweredAdaptersStillReads() throws {
        let old = #"{"bluetoothdAppeared":{"held":[],"adapters":["hci0"]}}"#
        let input = try JSONDecoder().decode(FleetStateMachine.Input.self, from: Data(old.utf8))
        #expect(input == .bluetoothdAppeared(held: [], adapters: [Self.hci0], powered: nil))
    }

    @Test func anObjectRecordedBeforePairedWasKeptReadsAsUnpaired() throws {
        let old = #"{"adapter":"hci0","services":[],"connected":false}"#
        let object = try JSONDecoder().decode(FleetStateMachine.DeviceObject.self, from: Data(old.utf8))
        #expect(object == FleetStateMachine.DeviceObject(adapter: Self.hci0))
    }

    @Test func aClassRecordedBeforeMeasurementDevicesReadsAsTheDaemonThenRanIt() throws {
        // Today's record of a class, less what older daemons did not write.
        let today = try JSONEncoder().encode(DeviceStateMachine.Configuration(subscriptions: ["00002a37-0000-1000-8000-00805f9b34fb"]))
        var object = try #require(try JSONSerialization.jsonObject(with: today) as? [String: Any])
        for key in ["bond", "intermittent", "setTime"] { #expect(object.removeValue(forKey: key) != nil, "\(key) is recorded") }
        var timeouts = try #require(object["timeouts"] as? [String: Any])
        #expect(timeouts.removeValue(forKey: "pairing") != nil)
        object["timeouts"] = timeouts
        let old = try JSONSerialization.data(withJSONObject: object)
        let configuration = try JSONDecoder().decode(DeviceStateMachine.Configuration.self, from: old)
        #expect(!configuration.bond && !configuration.intermittent && !configuration.setTime)
        #expect(configuration.timeouts == DeviceStateMachine.Timeouts())
    }

    // MARK: - Helpers

    static func expectRoundTrip(_ record: RecordedInput, sourceLocation: SourceLocation = #_sourceLocation) throws {
        let json = try record.json()
        let decoded = try RecordedInput(json: json)
        #expect(decoded == record, "\(json)", sourceLocation: sourceLocation)
    }

    static let allFleetInputKinds: Set<String> = [
        "restore", "restoreRuntimePins", "start", "started", "stop", "bluetoothdAppeared", "bluetoothdVanished", "adapterChanged", "adapterPowerChanged",
        "adapterRemoved", "device", "deviceOutput", "evaluate", "reload", "command", "discoveryFinished", "retryDiscovery",
        "bluetoothdPresentAtStart", "scan", "ownershipGate", "ownershipDecided", "pairingEnded",
    ]

    static func kind(_ input: FleetStateMachine.Input) -> String {
        switch input {
        case .restore: "restore"
        case .restoreRuntimePins: "restoreRuntimePins"
        case .start: "start"
        case .started: "started"
        case .stop: "stop"
        case .bluetoothdAppeared: "bluetoothdAppeared"
        case .bluetoothdVanished: "bluetoothdVanished"
        case .adapterChanged: "adapterChanged"
        case .adapterPowerChanged: "adapterPowerChanged"
        case .adapterRemoved: "adapterRemoved"
        case .device: "device"
        case .deviceOutput: "deviceOutput"
        case .evaluate: "evaluate"
        case .reload: "reload"
        case .command: "command"
        case .discoveryFinished: "discoveryFinished"
        case .retryDiscovery: "retryDiscovery"
        case .bluetoothdPresentAtStart: "bluetoothdPresentAtStart"
        case .scan: "scan"
        case .ownershipGate: "ownershipGate"
        case .ownershipDecided: "ownershipDecided"
        case .pairingEnded: "pairingEnded"
        }
    }

    static func kind(_ command: FleetCommand) -> String {
        switch command {
        case .pin: "pin"
        case .unpin: "unpin"
        case .disconnect: "disconnect"
        case .reconnect: "reconnect"
        case .prepareRead: "prepareRead"
        case .prepareWrite: "prepareWrite"
        case .subscribe: "subscribe"
        case .unsubscribe: "unsubscribe"
        }
    }

    static func kind(_ output: DeviceOutput) -> String {
        switch output {
        case .requestAttempt: "requestAttempt"
        case .withdrawAttemptRequest: "withdrawAttemptRequest"
        case .attemptFinished: "attemptFinished"
        case .standingEnded: "standingEnded"
        case .persist: "persist"
        case .lifecycle: "lifecycle"
        case .value: "value"
        case .resumeWrites: "resumeWrites"
        case .resolving: "resolving"
        case .writeOutcome: "writeOutcome"
        }
    }

    static func kind(_ event: DeviceEvent) -> String {
        switch event {
        case .adapterPowered: "adapterPowered"
        case .adapterUnpowered: "adapterUnpowered"
        case .bluetoothdAppeared: "bluetoothdAppeared"
        case .bluetoothdVanished: "bluetoothdVanished"
        case .deviceFound: "deviceFound"
        case .deviceLost: "deviceLost"
        case .pairedChanged: "pairedChanged"
        case .pairingKeyGiven: "pairingKeyGiven"
        case .pairingSucceeded: "pairingSucceeded"
        case .pairingFailed: "pairingFailed"
        case .clockWritten: "clockWritten"
        case .clockWriteFailed: "clockWriteFailed"
        case .connected: "connected"
        case .disconnected: "disconnected"
        case .connectFailed: "connectFailed"
        case .connectNeedsDiscovery: "connectNeedsDiscovery"
        case .servicesResolved: "servicesResolved"
        case .notificationsEnabled: "notificationsEnabled"
        case .subscribeFailed: "subscribeFailed"
        case .valueReceived: "valueReceived"
        case .readFailed: "readFailed"
        case .writeStarted: "writeStarted"
        case .writeCompleted: "writeCompleted"
        case .writeFailed: "writeFailed"
        case .writeCreditAvailable: "writeCreditAvailable"
        case .timeout: "timeout"
        case .attemptGranted: "attemptGranted"
        case .policyUpdated: "policyUpdated"
        case .restoreRequested: "restoreRequested"
        case .reconnectRequested: "reconnectRequested"
        case .subscriptionAdded: "subscriptionAdded"
        case .subscriptionRemoved: "subscriptionRemoved"
        case .linkLossExplained: "linkLossExplained"
        }
    }

    static func kind(_ effect: DeviceEffect) -> String {
        switch effect {
        case .startResolve: "startResolve"
        case .stopResolve: "stopResolve"
        case .requestAttempt: "requestAttempt"
        case .withdrawAttemptRequest: "withdrawAttemptRequest"
        case .attemptFinished: "attemptFinished"
        case .standingEnded: "standingEnded"
        case .connect: "connect"
        case .cancelConnect: "cancelConnect"
        case .disconnect: "disconnect"
        case .awaitServices: "awaitServices"
        case .read: "read"
        case .subscribe: "subscribe"
        case .unsubscribe: "unsubscribe"
        case .resumeWrites: "resumeWrites"
        case .pair: "pair"
        case .writeCurrentTime: "writeCurrentTime"
        case .scheduleTimer: "scheduleTimer"
        case .cancelTimer: "cancelTimer"
        case .persist: "persist"
        case .emit: "emit"
        }
    }
}
