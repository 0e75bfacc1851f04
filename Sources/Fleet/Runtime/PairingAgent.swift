import BlueZ
import DBus
import FleetCore
import Logging
import Synchronization

/// wearfleetd's pairing agent: `org.bluez.Agent1` at `path` on the BlueZ connection, registered
/// with `AgentManager1` (with the configured IO capability) each time bluetoothd appears. It is
/// never made the default agent, so a desktop's agent keeps answering for everything else;
/// bluetoothd asks it only about pairings the daemon itself starts (`Device1.Pair` on its
/// connection: src/agent.c `agent_get` takes the caller's agent first).
///
/// It answers only for devices of the fleet: `RequestPasskey` with the device's passkey from
/// `[pairing] passkeys_file`, `RequestConfirmation`/`RequestAuthorization`/`AuthorizeService`
/// accepted; everything else, and any device the fleet does not manage, `org.bluez.Error.Rejected`.
/// A passkey is never logged.
public final class PairingAgent: FleetObserver {
    public static let path: DBusObjectPath = "/org/wearfleet/PairingAgent"
    static let rejected = "org.bluez.Error.Rejected"

    private let client: BlueZClient
    private let capability: String
    private let logger: Logger
    private let passkeys: PairingPasskeysLookup
    /// Which devices it answers for, known once the fleet exists (`answer(for:)`).
    private let isFleetDevice = Mutex<@Sendable (DeviceID) async -> Bool>({ _ in false })
    /// Told before a passkey goes back to bluetoothd (`whenKeyGiven(_:)`): the device's machine
    /// learns a bonding is under way before the link can end with it.
    private let keyGiven = Mutex<@Sendable (DeviceID) async -> Void>({ _ in })
    /// bluetoothd appeared (a fleet event): the agent registers again, in `run()`.
    private let appearances: AsyncStream<Void>
    private let appeared: AsyncStream<Void>.Continuation

    /// A device's passkey (`[pairing] passkeys_file`, read again for each request).
    public typealias PairingPasskeysLookup = @Sendable (BluetoothAddress) -> UInt32?

    public init(client: BlueZClient, capability: String, passkeys: @escaping PairingPasskeysLookup, logger: Logger) {
        self.client = client
        self.capability = capability
        self.logger = logger
        self.passkeys = passkeys
        (appearances, appeared) = AsyncStream.makeStream(bufferingPolicy: .bufferingNewest(1))
    }

    /// Which devices it answers for (the fleet's).
    public func answer(for isFleetDevice: @escaping @Sendable (DeviceID) async -> Bool) {
        self.isFleetDevice.withLock { $0 = isFleetDevice }
    }

    /// Who hears that a device's passkey was given (the fleet).
    public func whenKeyGiven(_ handler: @escaping @Sendable (DeviceID) async -> Void) {
        keyGiven.withLock { $0 = handler }
    }

    // MARK: - Running

    /// Exports the agent and registers it whenever bluetoothd appears, until cancelled.
    public func run() async {
        do {
            try await client.connection.export(interface, at: Self.path)
        } catch {
            logger.error("pairing agent: cannot export \(Self.path): \(error)", metadata: ["event": "pairing_agent_failed"])
            return
        }
        for await _ in appearances { await register() }
        try? await client.connection.unexport(Self.path)
    }

    /// Stops `run()`.
    public func finish() { appeared.finish() }

    public func observe(_ event: FleetEvent) {
        if case .bluetoothdAppeared = event { appeared.yield() }
    }

    private func register() async {
        do {
            try await client.registerAgent(path: Self.path, capability: capability)
            logger.info("pairing agent registered (\(capability))", metadata: ["event": "pairing_agent_registered", "capability": "\(capability)"])
        } catch {
            logger.error(
                "pairing agent: RegisterAgent failed: \(error.name): \(error.message); devices that need a passkey cannot pair",
                metadata: ["event": "pairing_agent_failed", "bluez_error": "\(error.name)"])
        }
    }

    // MARK: - Agent1

    private var interface: DBusInterface {
        let device = DBusArgument("device", .objectPath)
        return DBusInterface(
            BlueZInterfaces.agent,
            methods: [
                DBusMethod("Release", handler: .sync { _ in [] }),
                DBusMethod("RequestPinCode", inputs: [device], outputs: [DBusArgument("pincode", .string)], handler: .async { call in
                    _ = try await self.fleetDevice(call, asking: "RequestPinCode")
                    // LE wearables use passkeys; a PIN code is BR/EDR legacy pairing.
                    throw DBusError(name: Self.rejected, message: "wearfleetd has no PIN codes")
                }),
                DBusMethod("RequestPasskey", inputs: [device], outputs: [DBusArgument("passkey", .uint32)], handler: .async { call in
                    let id = try await self.fleetDevice(call, asking: "RequestPasskey")
                    guard let passkey = self.passkeys(id.address) else {
                        self.logger.warning(
                            "pairing agent: no passkey for \(id) in passkeys_file; pairing refused",
                            metadata: ["event": "pairing_passkey_missing", "device": "\(id)"])
                        throw DBusError(name: Self.rejected, message: "no passkey for \(id)")
                    }
                    self.logger.info("pairing agent: passkey given for \(id)", metadata: ["event": "pairing_passkey_given", "device": "\(id)"])
                    await self.keyGiven.withLock { $0 }(id)
                    return [.uint32(passkey)]
                }),
                DBusMethod("DisplayPasskey", inputs: [device, DBusArgument("passkey", .uint32), DBusArgument("entered", .uint16)],
                    handler: .async { call in
                        _ = try await self.fleetDevice(call, asking: "DisplayPasskey")
                        return []
                    }),
                DBusMethod("DisplayPinCode", inputs: [device, DBusArgument("pincode", .string)], handler: .async { call in
                    _ = try await self.fleetDevice(call, asking: "DisplayPinCode")
                    return []
                }),
                DBusMethod("RequestConfirmation", inputs: [device, DBusArgument("passkey", .uint32)], handler: .async { call in
                    _ = try await self.fleetDevice(call, asking: "RequestConfirmation")
                    return []
                }),
                DBusMethod("RequestAuthorization", inputs: [device], handler: .async { call in
                    _ = try await self.fleetDevice(call, asking: "RequestAuthorization")
                    return []
                }),
                DBusMethod("AuthorizeService", inputs: [device, DBusArgument("uuid", .string)], handler: .async { call in
                    _ = try await self.fleetDevice(call, asking: "AuthorizeService")
                    return []
                }),
                DBusMethod("Cancel", handler: .sync { _ in
                    self.logger.notice("pairing agent: bluetoothd cancelled its request", metadata: ["event": "pairing_cancelled"])
                    return []
                }),
            ])
    }

    /// The fleet device a request names, or the request is rejected: the agent answers for the
    /// fleet only, and only bluetoothd may ask.
    private func fleetDevice(_ call: DBusMethodCall, asking what: String) async throws -> DeviceID {
        // Anyone on the bus can call the agent's object: a passkey is told to bluetoothd alone.
        guard await client.owner == call.sender else {
            logger.warning(
                "pairing agent: \(what) from \(call.sender), which is not bluetoothd: rejected",
                metadata: ["event": "pairing_request_rejected", "request": "\(what)"])
            throw DBusError(name: Self.rejected, message: "only bluetoothd may ask")
        }
        let path = try call.body.decode(DBusObjectPath.self, at: 0)
        guard let device = await client.tree.device(at: path), let id = device.identity else {
            throw DBusError(name: Self.rejected, message: "unknown device \(path)")
        }
        let isFleetDevice = self.isFleetDevice.withLock { $0 }
        guard await isFleetDevice(id) else {
            logger.info(
                "pairing agent: \(what) for \(id), not a fleet device: rejected",
                metadata: ["event": "pairing_request_rejected", "device": "\(id)", "request": "\(what)"])
            throw DBusError(name: Self.rejected, message: "\(id) is not a device of this fleet")
        }
        return id
    }
}
