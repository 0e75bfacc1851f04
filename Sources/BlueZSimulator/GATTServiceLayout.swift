import GATT

/// One primary service of a wearable's GATT database.
struct GATTServiceLayout: Sendable {
    var uuid: BluetoothUUID
    var characteristics: [GATTCharacteristicLayout]
}
