import BlueZ
import DBus
@testable import Fleet
import FleetCore
import Logging
import Synchronization
import Testing
import TestSupport

/// No `Connect` goes to an adapter the BlueZ mirror shows powering off, and a `Connect` that
/// fails once the mirror shows its adapter off is the adapter's, not the device's; a refused
/// `Disconnect` is logged by how much it matters. Against a real dbus-daemon and a stand-in
/// bluetoothd whose adapter has BlueZ 5.66's `PowerState`.
@Suite("Connecting through an adapter that is going")
struct UnusableAdapterConnectTests {
    static let strap = StandInBluetoothd.strap
    static let hci0 = AdapterID("hci0")
    static let adapterInterface = DBusInterface(
        "org.bluez.Adapter1",
        properties: [DBusProperty("Address", .string), DBusProperty("Powered", .boolean), DBusProperty("PowerState", .string)])

    /// A bluetoothd with a powered hci0 and the strap on it; `connect` and `disconnect` are what
    /// its `Device1` methods do, each counted.
    final class Bluetoothd: Sendable {
        let connection: DBusConnection
        let connects = Mutex(0)
        let disconnects = Mutex(0)

        init(connection: DBusConnection) {
            self.connection = connection
        }

        func setAdapter(_ values: [String: DBusValue]) async throws {
            try await connection.setProperties(values, of: "org.bluez.Adapter1", at: StandInBluetoothd.adapter)
        }
    }

    static func bluetoothd(
        on bus: PrivateBus,
        connect: @escaping @Sendable (DBusConnection) async throws -> Void = { _ in },
        disconnect: @escaping @Sendable () throws -> Void = {}
    ) async throws -> Bluetoothd {
        let connection = try await DBusConnection.connect(to: .address(bus.address), threadName: "going-bluez")
        await connection.addObjectManager(at: .root)
        try await connection.export(
            adapterInterface,
            properties: ["Address": .string("00:11:22:33:44:55"), "Powered": .boolean(true), "PowerState": .string("on")],
            at: StandInBluetoothd.adapter)
        let bluetoothd = Bluetoothd(connection: connection)
        try await StandInBluetoothd.exportStrap(
            on: connection, state: ["Connected": .boolean(false)],
            methods: [
                DBusMethod("Connect", handler: .async { [weak connection] _ in
                    bluetoothd.connects.withLock { $0 += 1 }
                    if let connection { try await connect(connection) }
                    return []
                }),
                DBusMethod("Disconnect", handler: .sync { _ in
                    bluetoothd.disconnects.withLock { $0 += 1 }
                    try disconnect()
                    return []
                }),
            ])
        try await StandInBluetoothd.takeBlueZName(on: connection)
        return bluetoothd
    }

    static func transport(_ parts: TransportParts, logger: Logger = Logger(label: "test") { _ in SwiftLogNoOpLogHandler() }) throws
        -> BlueZDeviceTransport
    {
        let transport = BlueZDeviceTransport(client: parts.client, poller: parts.poller, logger: logger)
        transport.addCentral(try CentralActor(adapter: hci0, client: parts.client, logger: logger))
        return transport
    }

    static func connect(_ transport: BlueZDeviceTransport) async -> Result<ConnectOutcome, TransportFailure> {
        do throws(TransportFailure) {
            return .success(try await transport.connect(strap, adapter: hci0, within: .seconds(5)))
        } catch {
            return .failure(error)
        }
    }

    @Test func noConnectGoesToAnAdapterThatIsPoweringOff() async throws {
        let bus = try PrivateBus()
        let bluetoothd = try await Self.bluetoothd(on: bus)
        let parts = try await TransportParts.start(on: bus)
        defer { parts.poller.stop() }
        let transport = try Self.transport(parts)

        #expect(try await Self.connect(transport).get() == .connected, "a powered adapter takes the Connect")
        #expect(bluetoothd.connects.withLock { $0 } == 1)

        // BlueZ 5.66 announces a power-off (`PowerState` "on-disabling") before `Powered` false.
        try await bluetoothd.setAdapter(["PowerState": .string("on-disabling")])
        let seen = await parts.client.waitForTree(timeout: .seconds(10)) { $0.adapter(at: StandInBluetoothd.adapter)?.powered == false }
        try #require(seen)
        #expect(try await Self.connect(transport).get() == .adapterUnavailable)
        #expect(bluetoothd.connects.withLock { $0 } == 1, "nothing was sent")

        await parts.client.stop()
        await bluetoothd.connection.close()
    }

    @Test func aConnectThatFailsAsItsAdapterPowersOffIsTheAdaptersFailure() async throws {
        let bus = try PrivateBus()
        // The adapter's power-off ends the pending Connect: `Powered` false goes out first, then
        // the error reply, as bluetoothd sends them.
        let bluetoothd = try await Self.bluetoothd(on: bus, connect: { connection in
            try await connection.setProperties(
                ["Powered": .boolean(false), "PowerState": .string("off")], of: "org.bluez.Adapter1", at: StandInBluetoothd.adapter)
            throw DBusError(name: "org.bluez.Error.Failed", message: "le-connection-abort-by-local")
        })
        let parts = try await TransportParts.start(on: bus)
        defer { parts.poller.stop() }
        let transport = try Self.transport(parts)

        #expect(try await Self.connect(transport).get() == .adapterUnavailable)
        #expect(bluetoothd.connects.withLock { $0 } == 1)

        await parts.client.stop()
        await bluetoothd.connection.close()
    }

    @Test func aConnectThatFailsWhileItsAdapterStaysOnIsTheDevicesFailure() async throws {
        let bus = try PrivateBus()
        let bluetoothd = try await Self.bluetoothd(on: bus, connect: { _ in
            throw DBusError(name: "org.bluez.Error.Failed", message: "le-connection-abort-by-remote")
        })
        let parts = try await TransportParts.start(on: bus)
        defer { parts.poller.stop() }
        let transport = try Self.transport(parts)

        let outcome = await Self.connect(transport)
        guard case .failure(let failure) = outcome else {
            Issue.record("expected the device's failure, got \(outcome)")
            return
        }
        #expect(failure.message == "le-connection-abort-by-remote")

        await parts.client.stop()
        await bluetoothd.connection.close()
    }

    // MARK: - Disconnect

    @Test func aDisconnectRefusedBecauseTheLinkIsAlreadyGoneIsLoggedAtDebug() async throws {
        let bus = try PrivateBus()
        let bluetoothd = try await Self.bluetoothd(on: bus, disconnect: {
            throw DBusError(name: "org.bluez.Error.NotConnected", message: "Not Connected")
        })
        let parts = try await TransportParts.start(on: bus)
        defer { parts.poller.stop() }
        let capture = LogCapture()
        let transport = try Self.transport(parts, logger: capture.logger(label: "test"))

        await transport.disconnect(Self.strap, on: Self.hci0)
        #expect(bluetoothd.disconnects.withLock { $0 } == 1)
        let lines = capture.entries.filter { $0.event == "disconnect_failed" }
        #expect(lines.map(\.level) == [.debug])
        #expect(lines.first?.metadata["bluez_error"] == "org.bluez.Error.NotConnected: Not Connected")
        #expect(lines.first?.metadata["error_class"] == "transient")
        #expect(lines.first?.metadata["adapter"] == "hci0")

        await parts.client.stop()
        await bluetoothd.connection.close()
    }

    @Test func anyOtherRefusedDisconnectIsAWarning() async throws {
        let bus = try PrivateBus()
        let bluetoothd = try await Self.bluetoothd(on: bus, disconnect: {
            throw DBusError(name: "org.bluez.Error.Failed", message: "Operation failed")
        })
        let parts = try await TransportParts.start(on: bus)
        defer { parts.poller.stop() }
        let capture = LogCapture()
        let transport = try Self.transport(parts, logger: capture.logger(label: "test"))

        await transport.disconnect(Self.strap, on: Self.hci0)
        let lines = capture.entries.filter { $0.event == "disconnect_failed" }
        #expect(lines.map(\.level) == [.warning])
        #expect(lines.first?.metadata["device_address"] == "C4:7A:20:00:00:01")

        await parts.client.stop()
        await bluetoothd.connection.close()
    }

    @Test func howLoudlyARefusedDisconnectIsLogged() {
        func level(_ name: String, onBus: Bool = true) -> Logger.Level {
            BlueZDeviceTransport.disconnectFailureLevel(BlueZError(name: name, message: ""), bluetoothdOnBus: onBus)
        }
        #expect(level("org.bluez.Error.NotConnected") == .debug)
        #expect(level("org.bluez.Error.DoesNotExist") == .debug)
        #expect(level("org.freedesktop.DBus.Error.UnknownObject") == .debug)
        #expect(level("org.freedesktop.DBus.Error.ServiceUnknown") == .debug)
        #expect(level("org.freedesktop.DBus.Error.NameHasNoOwner") == .debug)
        #expect(level("org.bluez.Error.Failed") == .warning)
        #expect(level("org.bluez.Error.InProgress") == .warning)
        #expect(level("org.freedesktop.DBus.Error.NoReply") == .warning)
        // bluetoothd left while the call was out: whatever the error, the link is gone with it.
        #expect(level("org.freedesktop.DBus.Error.NoReply", onBus: false) == .debug)
    }
}
