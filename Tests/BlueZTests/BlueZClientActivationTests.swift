import BlueZ
import DBus
import Synchronization
import Testing
import TestSupport

/// Debian installs `org.bluez` as a D-Bus activatable service: a call that lets the bus start
/// its destination, made while bluetoothd is away, would start a bluetoothd an operator stopped.
/// The client's calls carry NO_AUTO_START (the bus then answers `NameHasNoOwner` at once).
@Suite(.serialized) struct BlueZClientActivationTests {
    @Test func theClientsCallsNeverAskTheBusToStartBluetoothd() async throws {
        let bus = try PrivateBus()
        // A bluetoothd that notes each call's auto-start flag.
        let flags = Mutex<[String: Bool]>([:])
        let bluetoothd = try await DBusConnection.connect(to: .address(bus.address), threadName: "fake-bluez")
        let adapter = DBusInterface(
            "org.bluez.Adapter1",
            methods: [
                DBusMethod("StartDiscovery", handler: .sync { call in
                    flags.withLock { $0["StartDiscovery"] = call.message.autoStart }
                    return []
                })
            ])
        try await bluetoothd.export(adapter, at: "/org/bluez/hci0")
        _ = try await bluetoothd.call(
            destination: "org.freedesktop.DBus", path: "/org/freedesktop/DBus", interface: "org.freedesktop.DBus",
            member: "RequestName", [.string("org.bluez"), .uint32(4)])

        let connection = try await DBusConnection.connect(to: .address(bus.address))
        let client = BlueZClient(connection: connection)
        try await client.startDiscovery(adapter: "/org/bluez/hci0")
        #expect(flags.withLock { $0["StartDiscovery"] } == false)
        // A plain call allows activation (the D-Bus default), so the check above can fail.
        _ = try await connection.call(destination: "org.bluez", path: "/org/bluez/hci0", interface: "org.bluez.Adapter1", member: "StartDiscovery")
        #expect(flags.withLock { $0["StartDiscovery"] } == true)

        // With bluetoothd gone, the client's call fails as bluetoothd not being there (this bus
        // has no service files, so this part holds with or without the flag: it checks the
        // error's classification).
        await bluetoothd.close()
        let error = await #expect(throws: BlueZError.self) { try await client.startDiscovery(adapter: "/org/bluez/hci0") }
        #expect(error?.kind == .serviceUnavailable)
        await connection.close()
        bus.stop()
    }
}
