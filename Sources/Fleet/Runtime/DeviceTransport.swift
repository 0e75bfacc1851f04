import FleetCore

/// A failure from the transport, in BlueZ's own words (classified by FleetCore).
public typealias TransportFailure = DeviceEvent.Failure

extension DeviceEvent.Failure: Error {}

/// The operations a `DeviceActor` asks of the outside world for one device.
///
/// The BlueZ implementation maps them onto `Device1`/`GattCharacteristic1` calls; tests script a
/// fake. Asynchronous facts (the link came up or went down, the device object appeared, a
/// notification arrived) do not come back through here: the BlueZ event router feeds them to the
/// actor as `DeviceEvent`s.
public protocol DeviceTransport: Sendable {
    /// Start looking for the device (discovery filtered on it), until `stopResolve`.
    func startResolve(_ device: DeviceID) async
    func stopResolve(_ device: DeviceID) async
    /// `Device1.Connect` on `adapter`; returns when BlueZ replied.
    func connect(_ device: DeviceID, adapter: AdapterID) async throws(TransportFailure)
    /// Abort an in-flight connect.
    func cancelConnect(_ device: DeviceID) async
    func disconnect(_ device: DeviceID) async
    /// Waits for `ServicesResolved` and the GATT objects, then lists the UUIDs present.
    func awaitServices(_ device: DeviceID) async throws(TransportFailure) -> (services: Set<String>, characteristics: Set<String>)
    func read(_ device: DeviceID, characteristic: String) async throws(TransportFailure) -> [UInt8]
    func subscribe(_ device: DeviceID, characteristic: String, via path: DeviceEffect.NotifyPath) async throws(TransportFailure)
    /// Ends notifications of the characteristic (StopNotify, or closing its notify socket).
    func unsubscribe(_ device: DeviceID, characteristic: String, via path: DeviceEffect.NotifyPath) async
}
