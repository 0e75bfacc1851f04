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
    /// A benchmark's copy of `notifySocket`'s datagrams (`tapNotifySockets`); ends with it.
    var notifyTap: NotifySocket?
    /// The tap and the acquired socket take turns at being sent to first: the receiver woken
    /// first pays differently for its wake-up (the daemon's fd path cost 1.6–1.8× the floor when
    /// the tap always went first and 2.8–3.4× when the daemon's socket did, in the same hour),
    /// so neither place may stay with one receiver.
    var tapGoesFirst = false
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
        notifyTap?.close()
        notifyTap = nil
        writeSocket?.stop()
        writeSocket = nil
        notifyClients.removeAll()
        writeInProgress = false
    }
}
