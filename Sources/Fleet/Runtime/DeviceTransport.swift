import FleetCore

/// A failure from the transport, in BlueZ's own words (classified by FleetCore).
public typealias TransportFailure = DeviceEvent.Failure

extension DeviceEvent.Failure: Error {}

/// How a connection attempt ended when BlueZ raised no error.
public enum ConnectOutcome: Sendable, Hashable {
    /// `Connect` (or `ConnectDevice`) returned: the link is up.
    case connected
    /// The adapter holds no object for the device and bluetoothd offers no way to connect by
    /// address (`Adapter1.ConnectDevice` without `--experimental`): discovery must find it.
    case needsDiscovery
}

/// The operations a `DeviceActor` asks of the outside world for one device.
///
/// BlueZ has one object per adapter that heard a device, so every operation on a link names
/// the adapter the link goes through (`on:`; nil only where no link is known, which picks the
/// connected object). The BlueZ implementation maps them onto `Device1`/`GattCharacteristic1`
/// calls on that adapter's object; tests script a fake. Asynchronous facts (the link came up
/// or went down, the device object appeared, a notification arrived) do not come back through
/// here: the BlueZ event router feeds them to the actor as `DeviceEvent`s.
public protocol DeviceTransport: Sendable {
    /// Start looking for the device (discovery on every adapter), until `stopResolve`.
    func startResolve(_ device: DeviceID) async
    func stopResolve(_ device: DeviceID) async
    /// `Device1.Connect` through `adapter`'s object (or `ConnectDevice` on `adapter` when it
    /// has none and bluetoothd offers it); returns when BlueZ replied.
    func connect(_ device: DeviceID, adapter: AdapterID) async throws(TransportFailure) -> ConnectOutcome
    /// Abort an in-flight connect on `adapter`.
    func cancelConnect(_ device: DeviceID, on adapter: AdapterID?) async
    func disconnect(_ device: DeviceID, on adapter: AdapterID?) async
    /// Waits for `ServicesResolved` and the GATT objects, then lists the UUIDs present.
    func awaitServices(_ device: DeviceID, on adapter: AdapterID?) async throws(TransportFailure)
        -> (services: Set<String>, characteristics: Set<String>)
    func read(_ device: DeviceID, characteristic: String, on adapter: AdapterID?) async throws(TransportFailure) -> [UInt8]
    func subscribe(_ device: DeviceID, characteristic: String, via path: DeviceEffect.NotifyPath, on adapter: AdapterID?)
        async throws(TransportFailure)
    /// Ends notifications of the characteristic (StopNotify, or closing its notify socket).
    func unsubscribe(_ device: DeviceID, characteristic: String, via path: DeviceEffect.NotifyPath, on adapter: AdapterID?) async
}

extension DeviceTransport {
    /// Disconnects the device's connected object, whichever adapter it is on.
    public func disconnect(_ device: DeviceID) async {
        await disconnect(device, on: nil)
    }
}
