import BlueZ
import FleetCore

/// Decides where the BlueZ client's characteristic values (the D-Bus path's notifications) go:
/// to the value pipeline's source of that characteristic of that device, named by its
/// `DeviceID`. Asked once per characteristic (the client keeps the answer), so a notification
/// goes from the bus straight into the source.
struct CharacteristicValueRouter: Sendable {
    let pipeline: ValuePipeline

    /// The receiver of `characteristic`'s values; nil (its values are dropped) when bluetoothd
    /// gives its device no usable address, which no device the fleet knows can lack.
    func receiver(for characteristic: BlueZCharacteristicSource) -> BlueZValueReceiver? {
        guard let device = characteristic.deviceIdentity else { return nil }
        return pipeline.source(device: device, characteristic: characteristic.uuid).receive
    }
}
