import BlueZSimulator
import DBus
import Synchronization
import Testing
import TestSupport

/// Pairing with agents, as bluetoothd 5.66 does it: a passkey device asks the pairing caller's
/// agent (else the default agent) `RequestPasskey`; a wrong key, an agent's refusal, or no agent
/// that can enter one fail `Pair` with `AuthenticationFailed`; Just Works asks nothing.
@Suite("bluez-sim: pairing agents")
struct PairingAgentTests {
    static let cuff = "C0:FF:EE:C0:FF:01"
    static let scale = "C0:FF:EE:5C:A1:02"
    static let agentPath: DBusObjectPath = "/test/agent"

    static let scenario = Scenario(
        seed: 29, adapters: [AdapterSpec(name: "hci0", slots: 5)],
        devices: [
            DeviceSpec(kind: .heartRateStrap, address: cuff, name: "Cuff", pairing: .passkey, passkey: 246_810),
            DeviceSpec(kind: .heartRateStrap, address: scale, name: "Scale"),
        ])

    /// An `org.bluez.Agent1` on the test's connection that answers `RequestPasskey` with
    /// `passkey` (or fails `org.bluez.Error.Rejected` when nil), recording each device asked for.
    final class TestAgent: Sendable {
        let asked = Mutex<[DBusObjectPath]>([])

        func export(on connection: DBusConnection, passkey: UInt32?) async throws {
            let interface = DBusInterface(
                "org.bluez.Agent1",
                methods: [
                    DBusMethod("RequestPasskey", inputs: [.init("device", .objectPath)], outputs: [.init("passkey", .uint32)], handler: .sync { call in
                        let device = try call.body.decode(DBusObjectPath.self, at: 0)
                        self.asked.withLock { $0.append(device) }
                        guard let passkey else { throw DBusError(name: "org.bluez.Error.Rejected", message: "no") }
                        return [.uint32(passkey)]
                    }),
                    DBusMethod("Release", handler: .sync { _ in [] }),
                    DBusMethod("Cancel", handler: .sync { _ in [] }),
                ])
            try await connection.export(interface, at: PairingAgentTests.agentPath)
        }
    }

    func register(_ fixture: SimulatorFixture, capability: String = "KeyboardDisplay") async throws {
        try await fixture.call("/org/bluez", "org.bluez.AgentManager1", "RegisterAgent", [.objectPath(Self.agentPath), .string(capability)])
    }

    @Test func aPasskeyDeviceAsksTheCallersAgentAndBondsWithTheRightKey() async throws {
        let fixture = try await SimulatorFixture.start(Self.scenario)
        let agent = TestAgent()
        try await agent.export(on: fixture.client, passkey: 246_810)
        try await register(fixture)
        let path = try await fixture.connect(Self.cuff)
        try await fixture.call(path, "org.bluez.Device1", "Pair")
        #expect(agent.asked.withLock { $0 } == [path])
        #expect(try await fixture.property(path, "org.bluez.Device1", "Paired") == .boolean(true))
        #expect(try await fixture.property(path, "org.bluez.Device1", "Bonded") == .boolean(true))
        #expect(try await fixture.counter("Pairings", Self.cuff) == 1)
        await fixture.stop()
    }

    @Test func aWrongKeyFailsAuthenticationFailedAndARetryWithTheRightOneBonds() async throws {
        let fixture = try await SimulatorFixture.start(Self.scenario)
        let wrong = TestAgent()
        try await wrong.export(on: fixture.client, passkey: 111_111)
        try await register(fixture)
        let path = try await fixture.connect(Self.cuff)
        _ = try await expectError("org.bluez.Error.AuthenticationFailed", "Authentication Failed") {
            try await fixture.call(path, "org.bluez.Device1", "Pair")
        }
        #expect(try await fixture.property(path, "org.bluez.Device1", "Paired") == .boolean(false))
        // The same client, a new agent with the right key (as FACTS measured on the real stack).
        try await fixture.call("/org/bluez", "org.bluez.AgentManager1", "UnregisterAgent", [.objectPath(Self.agentPath)])
        try await fixture.client.unexport(Self.agentPath)
        let right = TestAgent()
        try await right.export(on: fixture.client, passkey: 246_810)
        try await register(fixture)
        try await fixture.call(path, "org.bluez.Device1", "Pair")
        #expect(try await fixture.property(path, "org.bluez.Device1", "Bonded") == .boolean(true))
        await fixture.stop()
    }

    @Test func noAgentThatCanEnterAKeyMeansAuthenticationFailed() async throws {
        let fixture = try await SimulatorFixture.start(Self.scenario)
        let path = try await fixture.connect(Self.cuff)
        _ = try await expectError("org.bluez.Error.AuthenticationFailed", "Authentication Failed") {
            try await fixture.call(path, "org.bluez.Device1", "Pair")
        }
        // An agent that cannot type (Just Works capability) cannot give the MITM the cuff wants.
        let agent = TestAgent()
        try await agent.export(on: fixture.client, passkey: 246_810)
        try await register(fixture, capability: "NoInputNoOutput")
        _ = try await expectError("org.bluez.Error.AuthenticationFailed", "Authentication Failed") {
            try await fixture.call(path, "org.bluez.Device1", "Pair")
        }
        #expect(agent.asked.withLock { $0 }.isEmpty)
        await fixture.stop()
    }

    @Test func anAgentThatRefusesFailsThePairing() async throws {
        let fixture = try await SimulatorFixture.start(Self.scenario)
        let agent = TestAgent()
        try await agent.export(on: fixture.client, passkey: nil)
        try await register(fixture)
        let path = try await fixture.connect(Self.cuff)
        _ = try await expectError("org.bluez.Error.AuthenticationFailed", "Authentication Failed") {
            try await fixture.call(path, "org.bluez.Device1", "Pair")
        }
        #expect(agent.asked.withLock { $0 }.count == 1)
        #expect(try await fixture.counter("Pairings", Self.cuff) == 0)
        await fixture.stop()
    }

    @Test func justWorksAsksNoAgent() async throws {
        let fixture = try await SimulatorFixture.start(Self.scenario)
        let agent = TestAgent()
        try await agent.export(on: fixture.client, passkey: 246_810)
        try await register(fixture)
        let path = try await fixture.connect(Self.scale)
        try await fixture.call(path, "org.bluez.Device1", "Pair")
        #expect(agent.asked.withLock { $0 }.isEmpty)
        #expect(try await fixture.property(path, "org.bluez.Device1", "Bonded") == .boolean(true))
        await fixture.stop()
    }

    @Test func agentRegistrationFollowsBlueZsRules() async throws {
        let fixture = try await SimulatorFixture.start(Self.scenario)
        _ = try await expectError("org.bluez.Error.InvalidArguments", "Invalid arguments in method call") {
            try await fixture.call("/org/bluez", "org.bluez.AgentManager1", "RegisterAgent", [.objectPath(Self.agentPath), .string("Telepathy")])
        }
        _ = try await expectError("org.bluez.Error.DoesNotExist", "Does Not Exist") {
            try await fixture.call("/org/bluez", "org.bluez.AgentManager1", "RequestDefaultAgent", [.objectPath(Self.agentPath)])
        }
        try await register(fixture)
        _ = try await expectError("org.bluez.Error.AlreadyExists", "Already Exists") { try await register(fixture) }
        try await fixture.call("/org/bluez", "org.bluez.AgentManager1", "RequestDefaultAgent", [.objectPath(Self.agentPath)])
        try await fixture.call("/org/bluez", "org.bluez.AgentManager1", "UnregisterAgent", [.objectPath(Self.agentPath)])
        _ = try await expectError("org.bluez.Error.DoesNotExist", "Does Not Exist") {
            try await fixture.call("/org/bluez", "org.bluez.AgentManager1", "UnregisterAgent", [.objectPath(Self.agentPath)])
        }
        await fixture.stop()
    }

    /// Another client's agent, made the default, answers a pairing this client asks for.
    @Test func theDefaultAgentAnswersForAClientWithoutOne() async throws {
        let fixture = try await SimulatorFixture.start(Self.scenario)
        let desktop = try await DBusConnection.connect(to: .address(fixture.bus.address), threadName: "desktop-agent")
        let agent = TestAgent()
        try await agent.export(on: desktop, passkey: 246_810)
        try await desktop.call(
            destination: "org.bluez", path: "/org/bluez", interface: "org.bluez.AgentManager1", member: "RegisterAgent",
            [.objectPath(Self.agentPath), .string("KeyboardDisplay")])
        try await desktop.call(
            destination: "org.bluez", path: "/org/bluez", interface: "org.bluez.AgentManager1", member: "RequestDefaultAgent",
            [.objectPath(Self.agentPath)])
        let path = try await fixture.connect(Self.cuff)
        try await fixture.call(path, "org.bluez.Device1", "Pair")
        #expect(agent.asked.withLock { $0 } == [path])
        await desktop.close()
        await fixture.stop()
    }
}
