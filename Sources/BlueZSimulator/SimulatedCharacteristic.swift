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
    /// bluetoothd enabled the CCC for its sessions on the link of now (StartNotify, AcquireNotify,
    /// or its re-enabling of sessions that outlived the last link).
    var subscribedOnLink = false

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
        subscribedOnLink = false
    }

    /// The link ended, the StartNotify sessions stay (bluetoothd 5.66 keeps them with the cached
    /// attribute, `btd_gatt_client_disconnected` in src/gatt-client.c only forgets their
    /// registration): sockets close and the stream stops, as in `tearDown`.
    mutating func suspendForLinkLoss() {
        let sessions = notifyClients
        tearDown()
        notifyClients = sessions
    }
}
