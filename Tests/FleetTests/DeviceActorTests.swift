import Fleet
import FleetCore
import Synchronization
import Testing
import TestSupport

/// A scripted stand-in for BlueZ: records every call, and connects, fails or hangs as told.
final class ScriptedTransport: DeviceTransport {
    enum ConnectBehaviour: Sendable { case succeed, fail(TransportFailure), hang, needsDiscovery, adapterUnavailable }

    private struct State {
        var calls: [String] = []
        /// The adapter each operation on the link named, in call order.
        var linkAdapters: [AdapterID?] = []
        var connectBehaviour: ConnectBehaviour = .succeed
        var hanging: [CheckedContinuation<Void, Never>] = []
        var connectsAnswered = 0
    }

    private let state = Mutex(State())
    let services: Set<String>
    let characteristics: Set<String>

    init(services: Set<String>, characteristics: Set<String>) {
        self.services = services
        self.characteristics = characteristics
    }

    var calls: [String] { state.withLock { $0.calls } }
    var linkAdapters: [AdapterID?] { state.withLock { $0.linkAdapters } }
    var connectsAnswered: Int { state.withLock { $0.connectsAnswered } }

    func setConnectBehaviour(_ behaviour: ConnectBehaviour) { state.withLock { $0.connectBehaviour = behaviour } }

    private func record(_ call: String) { state.withLock { $0.calls.append(call) } }

    private func record(_ call: String, on adapter: AdapterID?) {
        state.withLock {
            $0.calls.append(call)
            $0.linkAdapters.append(adapter)
        }
    }

    func startResolve(_ device: DeviceID) async { record("startResolve") }
    func stopResolve(_ device: DeviceID) async { record("stopResolve") }

    func connect(_ device: DeviceID, adapter: AdapterID) async throws(TransportFailure) -> ConnectOutcome {
        record("connect \(adapter)")
        switch state.withLock({ $0.connectBehaviour }) {
        case .succeed: return .connected
        case .needsDiscovery: return .needsDiscovery
        case .adapterUnavailable:
            defer { state.withLock { $0.connectsAnswered += 1 } }
            return .adapterUnavailable
        case .fail(let failure): throw failure
        case .hang:
            await withCheckedContinuation { continuation in state.withLock { $0.hanging.append(continuation) } }
            throw TransportFailure(name: "org.bluez.Error.Failed", message: "br-connection-canceled")
        }
    }

    func pair(_ device: DeviceID, on adapter: AdapterID?) async throws(TransportFailure) {
        record("pair", on: adapter)
    }

    func writeForSetup(_ device: DeviceID, characteristic: String, bytes: [UInt8], on adapter: AdapterID?) async throws(TransportFailure) {
        record("writeForSetup \(characteristic)", on: adapter)
    }

    func cancelConnect(_ device: DeviceID, on adapter: AdapterID?) async {
        record("cancelConnect", on: adapter)
        let hanging = state.withLock { state -> [CheckedContinuation<Void, Never>] in
            defer { state.hanging.removeAll() }
            return state.hanging
        }
        for continuation in hanging { continuation.resume() }
    }

    func disconnect(_ device: DeviceID, on adapter: AdapterID?) async { record("disconnect", on: adapter) }

    func awaitServices(_ device: DeviceID, on adapter: AdapterID?) async throws(TransportFailure)
        -> (services: Set<String>, characteristics: Set<String>)
    {
        record("awaitServices", on: adapter)
        return (services, characteristics)
    }

    func read(_ device: DeviceID, characteristic: String, on adapter: AdapterID?) async throws(TransportFailure) -> [UInt8] {
        record("read \(characteristic)", on: adapter)
        return [87]
    }

    func subscribe(_ device: DeviceID, characteristic: String, via path: DeviceEffect.NotifyPath, on adapter: AdapterID?)
        async throws(TransportFailure)
    {
        record("subscribe \(characteristic)", on: adapter)
    }

    func unsubscribe(_ device: DeviceID, characteristic: String, via path: DeviceEffect.NotifyPath, on adapter: AdapterID?) async {
        record("unsubscribe \(characteristic)", on: adapter)
    }
}

@Suite("DeviceActor executes the state machine's effects")
struct DeviceActorTests {
    static let heartRateService = "0000180d-0000-1000-8000-00805f9b34fb"
    static let heartRate = "00002a37-0000-1000-8000-00805f9b34fb"
    static let battery = "00002a19-0000-1000-8000-00805f9b34fb"
    static let hci0 = AdapterID("hci0")
    static let hci1 = AdapterID("hci1")

    let clock = ManualClock()
    let transport = ScriptedTransport(
        services: [heartRateService], characteristics: [heartRate, battery])
    let outputs: AsyncStream<DeviceOutput>
    let actor: DeviceActor

    init() throws {
        let device = DeviceID(address: try #require(BluetoothAddress("AA:BB:CC:00:00:01")))
        var configuration = DeviceStateMachine.Configuration()
        configuration.requiredServices = [Self.heartRateService]
        configuration.requiredCharacteristics = [Self.heartRate]
        configuration.readOnConnect = [Self.battery]
        configuration.subscriptions = [Self.heartRate]
        let (stream, sink) = AsyncStream<DeviceOutput>.makeStream()
        outputs = stream
        actor = DeviceActor(
            machine: DeviceStateMachine(device: device, configuration: configuration), transport: transport,
            clock: clock, seed: 1, output: { sink.yield($0) })
    }

    /// Brings the device to the point where it asks the gate for an attempt.
    func makeWanted() async throws {
        await actor.handle(.bluetoothdAppeared)
        await actor.handle(.adapterPowered(Self.hci0))
        await actor.handle(.deviceFound(adapter: Self.hci0))
        await actor.handle(.policyUpdated(wanted: true))
        _ = try await outputs.first(within: .seconds(5), "an attempt request") {
            if case .requestAttempt = $0 { return true }
            return false
        }
    }

    func waitForState(_ wanted: @escaping @Sendable (DeviceState) -> Bool, _ what: String) async throws {
        _ = try await outputs.first(within: .seconds(5), what) {
            if case .lifecycle(_, .stateChanged(_, let to, _, _)) = $0 { return wanted(to) }
            return false
        }
    }

    @Test func aGrantedAttemptLeadsToReadyThroughServicesReadsAndSubscriptions() async throws {
        try await makeWanted()
        await actor.handle(.attemptGranted(adapter: Self.hci0))
        try await waitForState({ $0 == .ready }, "ready")
        #expect(transport.calls == [
            "connect hci0", "awaitServices", "read \(Self.battery)", "subscribe \(Self.heartRate)",
        ])
    }

    @Test func everyOperationOnTheLinkNamesTheAdapterItGoesThrough() async throws {
        try await makeWanted()
        await actor.handle(.adapterPowered(Self.hci1))
        await actor.handle(.attemptGranted(adapter: Self.hci1))
        try await waitForState({ $0 == .ready }, "ready")
        // The link goes through hci1: none of its operations may fall back to hci0's object.
        await actor.handle(.policyUpdated(wanted: false))
        try await withTimeout(.seconds(5), "the disconnect") {
            while !transport.calls.contains("disconnect") { await Task.yield() }
        }
        #expect(transport.calls == [
            "connect hci1", "awaitServices", "read \(Self.battery)", "subscribe \(Self.heartRate)", "disconnect",
        ])
        #expect(transport.linkAdapters == [Self.hci1, Self.hci1, Self.hci1, Self.hci1])
    }

    @Test func anAdapterThatCannotConnectByAddressSendsTheDeviceBackToDiscoveryWithoutAFailure() async throws {
        try await makeWanted()
        transport.setConnectBehaviour(.needsDiscovery)
        await actor.handle(.attemptGranted(adapter: Self.hci0))
        let finished = try await outputs.first(within: .seconds(5), "the attempt to finish") {
            if case .attemptFinished = $0 { return true }
            return false
        }
        let device = DeviceID(address: try #require(BluetoothAddress("AA:BB:CC:00:00:01")))
        #expect(finished == .attemptFinished(device, adapter: Self.hci0, outcome: .cancelled))
        try await waitForState({ $0 == .resolving }, "resolving")
        #expect(await actor.state == .resolving)
    }

    /// The adapter was going when the attempt began (the mirror knew before the fleet): the
    /// outcome is no event, and the fleet's news of the adapter ends the attempt with no failure.
    @Test func aConnectTheAdapterCouldNotTakeWaitsForTheFleetsNewsAndRecordsNoFailure() async throws {
        try await makeWanted()
        transport.setConnectBehaviour(.adapterUnavailable)
        await actor.handle(.attemptGranted(adapter: Self.hci0))
        try await withTimeout(.seconds(5), "the connect to be answered") {
            while transport.connectsAnswered == 0 { await Task.yield() }
        }
        // Give the answer time to reach the actor: it must change nothing there.
        for _ in 0..<50 {
            await Task.yield()
            try await Task.sleep(for: .milliseconds(2))
        }
        #expect(await actor.state == .connecting(adapter: Self.hci0))
        await actor.handle(.adapterUnpowered(Self.hci0))
        let outputsSeen = Mutex<[DeviceOutput]>([])
        _ = try await outputs.first(within: .seconds(5), "the suspension") { output in
            outputsSeen.withLock { $0.append(output) }
            if case .lifecycle(_, .stateChanged(_, .suspended(.noPoweredAdapter), _, _)) = output { return true }
            return false
        }
        let seen = outputsSeen.withLock { $0 }
        #expect(!seen.contains { if case .lifecycle(_, .failed) = $0 { true } else { false } }, "no failure: \(seen)")
        #expect(seen.contains(.attemptFinished(actor.device, adapter: Self.hci0, outcome: .failed(.bluetoothOff))))
    }

    @Test func aConnectFailureIsReportedToTheGateAndBacksOff() async throws {
        try await makeWanted()
        transport.setConnectBehaviour(.fail(TransportFailure(name: "org.bluez.Error.Failed", message: "le-connection-abort-by-remote")))
        await actor.handle(.attemptGranted(adapter: Self.hci0))
        let finished = try await outputs.first(within: .seconds(5), "the attempt to finish") {
            if case .attemptFinished = $0 { return true }
            return false
        }
        #expect(finished == .attemptFinished(actor.device, adapter: Self.hci0, outcome: .failed(.transient)))
        try await waitForState({ if case .backingOff = $0 { return true }; return false }, "backing off")
    }

    @Test func aHangingConnectIsCancelledByItsTimeout() async throws {
        try await makeWanted()
        transport.setConnectBehaviour(.hang)
        await actor.handle(.attemptGranted(adapter: Self.hci0))
        try await waitForState({ $0 == .connecting(adapter: Self.hci0) }, "connecting")
        // Only the injected clock moves: the connect timeout fires when the test says so.
        clock.advance(by: DeviceStateMachine.Timeouts().connect + .seconds(1))
        try await waitForState({ if case .backingOff = $0 { return true }; return false }, "backing off after the timeout")
        #expect(transport.calls.contains("cancelConnect"))
    }

    @Test func shuttingDownCancelsArmedTimers() async throws {
        try await makeWanted()
        transport.setConnectBehaviour(.hang)
        await actor.handle(.attemptGranted(adapter: Self.hci0))
        try await waitForState({ $0 == .connecting(adapter: Self.hci0) }, "connecting")
        let clock = self.clock
        try await withTimeout(.seconds(5), "the connect timer to be armed") {
            while clock.sleeperCount == 0 { await Task.yield() }
        }
        await actor.shutDown()
        #expect(clock.sleeperCount == 0, "cancelling the timer task removed its sleeper")
        clock.advance(by: .seconds(3600))
        #expect(await actor.state == .connecting(adapter: Self.hci0))
    }
}
