import DBus
import GATT

/// Run-time state of one exported characteristic of a connected device.
struct SimulatedCharacteristic {
    var layout: GATTCharacteristicLayout
    var path: DBusObjectPath
    var servicePath: DBusObjectPath
    var descriptorPaths: [DBusObjectPath]
    var value: [UInt8]
    /// Clients that called StartNotify (their notify sessions).
    var notifyClients: Set<String> = []
    var notifySocket: NotifySocket?
    var writeSocket: WriteSocketReader?
    /// A write with response is in flight (a second one fails InProgress).
    var writeInProgress = false
    var streamTask: Task<Void, Never>?

    var isNotifying: Bool { !notifyClients.isEmpty || notifySocket != nil }

    /// Closes sockets and stops the stream: on disconnect, or when the object goes away.
    mutating func tearDown() {
        streamTask?.cancel()
        streamTask = nil
        notifySocket?.close()
        notifySocket = nil
        writeSocket?.stop()
        writeSocket = nil
        notifyClients.removeAll()
        writeInProgress = false
    }
}
