import BlueZ
import DBus
import FleetCore
import Fleet
import TestSupport

/// A bluetoothd written by a test, on a private bus, for what bluez-sim does not do (a call that
/// never answers, GATT objects exported late): the powered adapter hci0 and the strap
/// C4:7A:20:00:00:01 on it, with the `Device1` the test needs.
///
/// The steps are separate so a test can export more between them: `connect`, `exportStrap`, then
/// `takeBlueZName` last, so a client that sees the name finds every object already there.
enum StandInBluetoothd {
    static let adapter: DBusObjectPath = "/org/bluez/hci0"
    static let device: DBusObjectPath = "/org/bluez/hci0/dev_C4_7A_20_00_00_01"
    static let strap = DeviceID(address: BluetoothAddress("C4:7A:20:00:00:01")!)

    /// A connection to `bus` with an object manager at the root and the adapter exported.
    static func connect(to bus: PrivateBus, threadName: String) async throws -> DBusConnection {
        let connection = try await DBusConnection.connect(to: .address(bus.address), threadName: threadName)
        await connection.addObjectManager(at: .root)
        try await connection.export(
            DBusInterface("org.bluez.Adapter1", properties: [DBusProperty("Address", .string), DBusProperty("Powered", .boolean)]),
            properties: ["Address": .string("00:11:22:33:44:55"), "Powered": .boolean(true)], at: adapter)
        return connection
    }

    /// Exports the strap's `Device1`: its address, address type and adapter, then `state` (such
    /// as `Connected`) in that order, and `methods`.
    static func exportStrap(
        on connection: DBusConnection, state: KeyValuePairs<String, DBusValue>, methods: [DBusMethod] = []
    ) async throws {
        let identity: KeyValuePairs<String, DBusValue> = [
            "Address": .string("C4:7A:20:00:00:01"), "AddressType": .string("public"), "Adapter": .objectPath(adapter),
        ]
        let all = Array(identity) + Array(state)
        try await connection.export(
            DBusInterface("org.bluez.Device1", methods: methods, properties: all.map { DBusProperty($0.key, $0.value.type) }),
            properties: Dictionary(uniqueKeysWithValues: all.map { ($0.key, $0.value) }), at: device)
    }

    /// Takes the name `org.bluez` (flag 4: do not queue).
    static func takeBlueZName(on connection: DBusConnection) async throws {
        _ = try await connection.call(
            destination: "org.freedesktop.DBus", path: "/org/freedesktop/DBus", interface: "org.freedesktop.DBus",
            member: "RequestName", [.string("org.bluez"), .uint32(4)])
    }
}

/// A started `BlueZClient` on a private bus and the notification poller a `BlueZDeviceTransport`
/// needs: the transport under test is built from both.
struct TransportParts {
    let client: BlueZClient
    let poller: NotificationSocketPoller

    static func start(on bus: PrivateBus) async throws -> TransportParts {
        let client = BlueZClient(connection: try await DBusConnection.connect(to: .address(bus.address)))
        try await client.start()
        return TransportParts(client: client, poller: try NotificationSocketPoller { _, _ in { _ in } })
    }
}
