import BlueZ
import DBus
import Testing
import TestSupport

/// A stand-in bluetoothd built with the DBus library: enough of BlueZ's tree to watch the
/// client mirror it and follow a restart.
struct FakeBluetoothd {
    let connection: DBusConnection
    static let adapterPath: DBusObjectPath = "/org/bluez/hci0"

    static let adapterInterface = DBusInterface(
        "org.bluez.Adapter1", properties: [DBusProperty("Address", .string), DBusProperty("Powered", .boolean)])

    static let deviceInterface = DBusInterface(
        "org.bluez.Device1",
        methods: [
            DBusMethod("Connect", handler: .sync { _ in
                throw DBusError(name: "org.bluez.Error.Failed", message: "le-connection-abort-by-local")
            }),
            DBusMethod("Disconnect", handler: .sync { _ in [] }),
        ],
        properties: [
            DBusProperty("Address", .string), DBusProperty("Adapter", .objectPath), DBusProperty("RSSI", .int16),
            DBusProperty("Connected", .boolean),
        ])

    static func start(on bus: PrivateBus, devices: Int) async throws -> FakeBluetoothd {
        let connection = try await DBusConnection.connect(to: .address(bus.address), threadName: "fake-bluez")
        await connection.addObjectManager(at: .root)
        try await connection.export(adapterInterface, properties: ["Address": .string("00:11:22:33:44:55"), "Powered": .boolean(true)], at: adapterPath)
        for index in 0..<devices { try await addDevice(index, on: connection) }
        let reply = try await connection.call(
            destination: "org.freedesktop.DBus", path: "/org/freedesktop/DBus", interface: "org.freedesktop.DBus",
            member: "RequestName", [.string("org.bluez"), .uint32(4)])
        #expect(reply == [.uint32(1)])
        return FakeBluetoothd(connection: connection)
    }

    static func devicePath(_ index: Int) -> DBusObjectPath {
        (try? adapterPath.appending("dev_AA_BB_CC_DD_EE_\(index < 10 ? "0" : "")\(index)")) ?? adapterPath
    }

    static func addDevice(_ index: Int, on connection: DBusConnection) async throws {
        try await connection.export(deviceInterface, properties: [
            "Address": .string("AA:BB:CC:DD:EE:\(index < 10 ? "0" : "")\(index)"), "Adapter": .objectPath(adapterPath),
            "RSSI": .int16(-60), "Connected": .boolean(false),
        ], at: devicePath(index))
    }
}

@Suite("The BlueZ client against a stand-in bluetoothd")
struct BlueZClientTests {
    @Test func mirrorsTheTreeAndFollowsSignals() async throws {
        let bus = try PrivateBus()
        let bluetoothd = try await FakeBluetoothd.start(on: bus, devices: 2)
        let client = BlueZClient(connection: try await DBusConnection.connect(to: .address(bus.address)))
        try await client.start()
        #expect(await client.tree.devices.count == 2)
        #expect(await client.owner == bluetoothd.connection.uniqueName)

        let events = client.events
        try await bluetoothd.connection.setProperty("RSSI", to: .int16(-42), of: "org.bluez.Device1", at: FakeBluetoothd.devicePath(0))
        _ = try await events.first(within: .seconds(5), "the RSSI change") {
            if case .deviceUpdated(let path, let fields) = $0 { return path == FakeBluetoothd.devicePath(0) && fields.contains(.rssi) }
            return false
        }
        #expect(await client.tree.device(at: FakeBluetoothd.devicePath(0))?.rssi == -42)

        try await FakeBluetoothd.addDevice(7, on: bluetoothd.connection)
        let added = try await events.first(within: .seconds(5), "the new device") {
            if case .deviceAdded(let device) = $0 { return device.path == FakeBluetoothd.devicePath(7) }
            return false
        }
        guard case .deviceAdded(let device) = added else { return }
        #expect(device.address == "AA:BB:CC:DD:EE:07", "the event carries the device as the mirror holds it")
        #expect(await client.tree.devices.count == 3)
        await client.stop()
    }

    @Test func followsBluetoothdRestartingWithANewUniqueName() async throws {
        let bus = try PrivateBus()
        let first = try await FakeBluetoothd.start(on: bus, devices: 3)
        let client = BlueZClient(connection: try await DBusConnection.connect(to: .address(bus.address)))
        try await client.start()
        let events = client.events

        await first.connection.close()
        _ = try await events.first(within: .seconds(5), "bluetoothd to vanish") { if case .vanished = $0 { return true }; return false }
        #expect(await client.tree.devices.isEmpty)
        #expect(await client.owner == nil)

        let second = try await FakeBluetoothd.start(on: bus, devices: 1)
        let appeared = try await events.first(within: .seconds(5), "bluetoothd to return") {
            if case .appeared = $0 { return true }
            return false
        }
        guard case .appeared(let owner, let adapters, let devices) = appeared else { return }
        #expect(owner == second.connection.uniqueName)
        #expect(owner != first.connection.uniqueName)
        #expect(adapters.map(\.path) == [FakeBluetoothd.adapterPath])
        #expect(devices.map(\.path) == [FakeBluetoothd.devicePath(0)], "the event carries the new snapshot's devices")
        #expect(await client.tree.devices.count == 1, "the mirror was rebuilt from the new tree")
        await client.stop()
    }

    @Test func callErrorsKeepBlueZsNameAndText() async throws {
        let bus = try PrivateBus()
        _ = try await FakeBluetoothd.start(on: bus, devices: 1)
        let client = BlueZClient(connection: try await DBusConnection.connect(to: .address(bus.address)))
        await #expect {
            try await client.connect(device: FakeBluetoothd.devicePath(0))
        } throws: { error in
            guard let error = error as? BlueZError else { return false }
            return error.kind == .failed && error.name == "org.bluez.Error.Failed" && error.message == "le-connection-abort-by-local"
        }
        await #expect {
            try await client.connect(device: "/org/bluez/hci0/dev_00_00_00_00_00_00")
        } throws: { ($0 as? BlueZError)?.kind == .unknownObject }
    }
}
