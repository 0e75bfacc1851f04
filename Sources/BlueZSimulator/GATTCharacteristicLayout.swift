import BluetoothVocabulary
import GATT

/// One characteristic of a wearable's GATT database: what BlueZ would discover on it.
struct GATTCharacteristicLayout: Sendable {
    var uuid: BluetoothUUID
    /// What it allows; exported as BlueZ's `Flags` words (`read`, `write-without-response`, …).
    var flags: GATTCharacteristicFlags
    /// The value a read returns before anything changed it.
    var initialValue: [UInt8]
    /// How often a subscribed client gets a notification (simulated seconds); nil when the
    /// characteristic only notifies in answer to writes.
    var notifyInterval: Double?
    /// True when the interval is a real rate that `timeScale` must not stretch.
    var realTimeRate = false
    /// Enabling its notifications or indications (a CCC write) wants an encrypted link.
    var encryptedSubscribe = false
    /// A write request to it wants an encrypted link.
    var encryptedWrite = false

    var notifies: Bool { !flags.isDisjoint(with: .anyNotification) }
}
