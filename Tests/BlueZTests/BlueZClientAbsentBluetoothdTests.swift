import BlueZ
import DBus
import Testing
import TestSupport

/// A client that follows bluetoothd sends it nothing while it is away: whoever calls (a task
/// the fleet started before it heard bluetoothd left, a retry) gets bluetoothd's absence at once,
/// and the bus never sees the call.
@Suite("The BlueZ client while bluetoothd is away")
struct BlueZClientAbsentBluetoothdTests {
    @Test func noCallIsSentWhileBluetoothdIsNotOnTheBus() async throws {
        let bus = try PrivateBus()
        let bluetoothd = try await FakeBluetoothd.start(on: bus, devices: 1)
        let client = BlueZClient(connection: try await DBusConnection.connect(to: .address(bus.address)))
        try await client.start()

        // bluetoothd answers while it is there.
        let answered = await #expect(throws: BlueZError.self) { try await client.connect(device: FakeBluetoothd.devicePath(0)) }
        #expect(answered?.message == "le-connection-abort-by-local")

        await bluetoothd.connection.close()
        let gone = await client.waitForTree(timeout: .seconds(10)) { $0.adapters.isEmpty }
        try #require(gone)
        #expect(await client.owner == nil)
        let refused = await #expect(throws: BlueZError.self) { try await client.connect(device: FakeBluetoothd.devicePath(0)) }
        #expect(refused?.kind == .serviceUnavailable, "as bluetoothd's absence, which the fleet classifies as notReady")
        #expect(refused?.message.contains("not sent") == true, "refused by the client, not by the bus: \(String(describing: refused))")
        let discovery = await #expect(throws: BlueZError.self) { try await client.startDiscovery(adapter: FakeBluetoothd.adapterPath) }
        #expect(discovery?.message.contains("not sent") == true)

        await client.stop()
        await client.connection.close()
        bus.stop()
    }
}
