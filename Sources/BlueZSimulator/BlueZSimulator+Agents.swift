import BluetoothVocabulary
import DBus

/// A pairing agent a client registered with `AgentManager1`.
struct RegisteredAgent: Sendable, Hashable {
    /// The client's unique bus name.
    var owner: String
    var path: DBusObjectPath
    var capability: String
}

// Pairing agents and pairing, as bluetoothd 5.66 has them: `AgentManager1.RegisterAgent`
// (one agent per client, its IO capability), `RequestDefaultAgent`, an agent gone with its
// client; `Device1.Pair` asks the caller's agent, else the default one (src/agent.c `agent_get`),
// and answers with the errors of src/device.c `new_authentication_return`. Every registered agent
// joins the queue of default agents (`agent_create`: the first one registered is the default
// until another asks to be), so a pairing nobody started through `Pair` (one the kernel runs to
// raise a link's security) asks the head of that queue (src/device.c `new_auth`: `agent_get(NULL)`).

extension BlueZSimulator {
    /// The capabilities `RegisterAgent` takes (doc/org.bluez.AgentManager.rst); "" means
    /// KeyboardDisplay.
    static let agentCapabilities: Set<String> = ["DisplayOnly", "DisplayYesNo", "KeyboardOnly", "NoInputNoOutput", "KeyboardDisplay", ""]
    /// How long bluetoothd waits for an agent's answer (src/agent.c `REQUEST_TIMEOUT`) and SMP
    /// for the pairing to finish (Linux `SMP_TIMEOUT`, 30 s): the shorter ends it.
    static let pairingAgentTimeout: Duration = .seconds(30)

    func agentManagerInterface() -> DBusInterface {
        DBusInterface(
            "org.bluez.AgentManager1",
            methods: [
                DBusMethod("RegisterAgent", inputs: [.init("agent", .objectPath), .init("capability", .string)], handler: .async { call in
                    try await self.registerAgent(
                        owner: call.sender, path: try call.body.decode(DBusObjectPath.self, at: 0),
                        capability: try call.body.decode(String.self, at: 1))
                    return []
                }),
                DBusMethod("UnregisterAgent", inputs: [.init("agent", .objectPath)], handler: .async { call in
                    try await self.unregisterAgent(owner: call.sender, path: try call.body.decode(DBusObjectPath.self, at: 0))
                    return []
                }),
                DBusMethod("RequestDefaultAgent", inputs: [.init("agent", .objectPath)], handler: .async { call in
                    try await self.requestDefaultAgent(owner: call.sender, path: try call.body.decode(DBusObjectPath.self, at: 0))
                    return []
                }),
            ])
    }

    /// Both ends forget the device's bonds, as if none was ever made (its objects stay, `Paired`
    /// and `Bonded` false): for tests of a pairing that fails. False when there is no such
    /// device.
    public func forgetBond(address: String) async -> Bool {
        guard let device = devices[address] else { return false }
        for (adapter, object) in device.objects where object.paired {
            devices[address]?.objects[adapter]?.paired = false
            devices[address]?.objects[adapter]?.bonded = false
            if object.exported {
                await setProperties(["Paired": .boolean(false), "Bonded": .boolean(false)], of: Self.deviceInterfaceName, at: object.path)
            }
        }
        return true
    }

    /// The clients whose agents are registered (for tests).
    public var agentOwners: [String] { agents.keys.sorted() }

    func registerAgent(owner: String, path: DBusObjectPath, capability: String) throws {
        guard Self.agentCapabilities.contains(capability) else { throw BlueZError.invalidArguments() }
        guard agents[owner] == nil else { throw BlueZError.alreadyExists() }
        agents[owner] = RegisteredAgent(owner: owner, path: path, capability: capability.isEmpty ? "KeyboardDisplay" : capability)
        defaultAgentOwners.append(owner)
    }

    func unregisterAgent(owner: String, path: DBusObjectPath) throws {
        guard agents[owner]?.path == path else { throw BlueZError.doesNotExist() }
        agents[owner] = nil
        defaultAgentOwners.removeAll { $0 == owner }
    }

    func requestDefaultAgent(owner: String, path: DBusObjectPath) throws {
        guard agents[owner]?.path == path else { throw BlueZError.doesNotExist() }
        defaultAgentOwners.removeAll { $0 == owner }
        defaultAgentOwners.insert(owner, at: 0)
    }

    /// A client left the bus: its agent goes with it.
    func agentOwnerVanished(_ owner: String) {
        agents[owner] = nil
        defaultAgentOwners.removeAll { $0 == owner }
    }

    /// The agent bluetoothd asks for a pairing `caller` started: its own, else the default. A
    /// pairing nobody started (`caller` nil) asks the default.
    func agent(for caller: String?) -> RegisteredAgent? {
        if let caller, let own = agents[caller] { return own }
        return defaultAgentOwners.first.flatMap { agents[$0] }
    }

    /// SMP with a device that displays `passkey` and insists on MITM: the host must enter it,
    /// through an agent that can (keyboard). Throws as bluetoothd answers `Pair`.
    func enterPasskey(_ passkey: UInt32, for devicePath: DBusObjectPath, caller: String?) async throws {
        guard let agent = agent(for: caller), ["KeyboardOnly", "KeyboardDisplay"].contains(agent.capability), let connection else {
            // No agent that can enter it: the host's IO capability cannot give MITM protection,
            // and the device refuses (SMP Authentication Requirements).
            counters.pairingFailures += 1
            throw BlueZError.authenticationFailed()
        }
        counters.agentRequests += 1
        let answer: [DBusValue]
        do {
            answer = try await connection.call(
                destination: agent.owner, path: agent.path, interface: "org.bluez.Agent1", member: "RequestPasskey",
                [.objectPath(devicePath)], timeout: Self.pairingAgentTimeout)
        } catch let error as DBusError where error.name == DBusError.noReply || error.name == DBusError.timeout {
            counters.pairingFailures += 1
            throw BlueZError.authenticationTimeout()
        } catch {
            // An agent's error (Rejected, Canceled) is a negative passkey reply: SMP fails.
            counters.pairingFailures += 1
            throw BlueZError.authenticationFailed()
        }
        guard case .uint32(let entered)? = answer.first, entered == passkey else {
            // SMP: Confirm Value Failed (reason 4).
            counters.pairingFailures += 1
            throw BlueZError.authenticationFailed()
        }
    }
}
