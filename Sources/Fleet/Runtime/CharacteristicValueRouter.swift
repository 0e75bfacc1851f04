import BlueZ
import FleetCore
import Synchronization

/// Takes the BlueZ client's characteristic values (the D-Bus path's notifications, handed over on
/// the connection's thread) straight to the value pipeline, naming the device the way
/// `BlueZEventTranslator.identity(of:)` does. Device identities are parsed once per device.
final class CharacteristicValueRouter: Sendable {
    private let pipeline: ValuePipeline
    /// Address as bluetoothd spells it → its address type and identity; bounded like the
    /// pipeline's own caches (a device beyond it is parsed every time, never dropped).
    private let identities = Mutex<[String: (type: String?, id: DeviceID)]>([:])
    private static let cacheLimit = 4096

    init(pipeline: ValuePipeline) {
        self.pipeline = pipeline
    }

    func route(_ value: BlueZCharacteristicValue) {
        guard let address = value.address else { return }
        let id: DeviceID
        if let known = identities.withLock({ $0[address] }), known.type == value.addressType {
            id = known.id
        } else {
            guard let parsed = BluetoothAddress(address) else { return }
            id = DeviceID(address: parsed, addressType: AddressType(rawValue: value.addressType ?? "public") ?? .public)
            identities.withLock { if $0.count < Self.cacheLimit || $0[address] != nil { $0[address] = (value.addressType, id) } }
        }
        pipeline.ingest(device: id, characteristic: value.uuid, bytes: value.bytes)
    }
}
