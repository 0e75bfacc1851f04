import FleetCore

/// Everything the fleet's executor asks of bluetoothd, in the fleet's own words: facts come out
/// as `FleetStateMachine` inputs, device operations go through a `DeviceTransport`, discovery is
/// driven per adapter, and writes go through `GATTWriteChannel`. `BlueZFleetBluetooth` is the
/// implementation over BlueZ's D-Bus API; tests drive the executor with a fake, no bus needed.
public protocol FleetBluetooth: GATTWriteChannel {
    /// What bluetoothd's changes mean to the fleet, in the order they happened. Characteristic
    /// values take the data path (the fleet's `ValuePipeline`) instead. Call once, before `start`.
    func facts() -> AsyncStream<FleetStateMachine.Input>
    /// Starts following bluetoothd (the first facts may arrive before this returns). True when
    /// bluetoothd was there and its objects were read: the facts of its appearance are on their
    /// way, if not already delivered.
    func start() async throws -> Bool
    /// Stops following bluetoothd and closes every notification socket.
    func stop() async
    /// The device's objects on every adapter, as bluetoothd has them now.
    func objects(of device: DeviceID) async -> [FleetStateMachine.DeviceObject]
    /// Every device object bluetoothd holds, with when each was last heard advertising: what
    /// the radio hears, for `FleetOrchestrator.nearby()`.
    func sightings() async -> [FleetSighting]
    /// Bonds with the device (`Device1.Pair` on its object on `adapter`, else any of its
    /// objects), its pairing answered by the daemon's agent; gives up (and cancels the pairing)
    /// after `timeout`.
    func pair(_ device: DeviceID, on adapter: AdapterID?, timeout: Duration) async throws(DeviceEvent.Failure)
    /// Forgets the bond: every object bluetoothd has for the device is removed
    /// (`Adapter1.RemoveDevice`, BlueZ's only way to unpair), and is found again unbonded.
    func unpair(_ device: DeviceID) async throws(DeviceEvent.Failure)
    /// The operations a device actor asks for.
    var deviceTransport: any DeviceTransport { get }
    /// The device's notification sockets close (its link is gone, or it left the fleet).
    func dropNotifySockets(of device: DeviceID)

    // MARK: - Adapters

    /// Prepares connection attempts on `adapter`. Calling it again for the same adapter changes
    /// nothing.
    func addAdapter(_ adapter: AdapterID) throws
    /// bluetoothd or the adapter stopped: what was learned of bluetoothd there is stale.
    func adapterStopped(_ adapter: AdapterID) async
    /// Makes one discovery call on `adapter` and returns bluetoothd's refusal, nil once it was
    /// done. The fleet's executor runs it as a task of its own and never waits for it.
    func discovery(_ call: DiscoveryCall, on adapter: AdapterID) async -> DeviceEvent.Failure?
}

/// A characteristic as the write path and commands need to know it.
public struct FleetCharacteristic: Sendable, Hashable {
    /// Names this characteristic object to the channel that found it (BlueZ: its object path).
    public var handle: String
    public var flags: GATTCharacteristicFlags
    /// BlueZ offers `AcquireWrite` for it.
    public var writeAcquirable: Bool

    public init(handle: String, flags: GATTCharacteristicFlags, writeAcquirable: Bool = false) {
        self.handle = handle
        self.flags = flags
        self.writeAcquirable = writeAcquirable
    }
}

/// How the write path reaches a device's characteristics: looked up by UUID under the device's
/// connected object first.
public protocol GATTWriteChannel: Sendable {
    func characteristic(_ uuid: String, of device: DeviceID) async -> FleetCharacteristic?
    /// `WriteValue` on a characteristic `characteristic(_:of:)` found, as a request (with
    /// response) or a command (without).
    func writeValue(_ bytes: [UInt8], to characteristic: FleetCharacteristic, withResponse: Bool) async throws(DeviceEvent.Failure)
    /// Like `writeValue(_:to:withResponse:)`, the call bounded by `timeout` (the device's class
    /// `write` timeout and a margin) rather than a fixed one.
    func writeValue(
        _ bytes: [UInt8], to characteristic: FleetCharacteristic, withResponse: Bool, within timeout: Duration
    ) async throws(DeviceEvent.Failure)
    /// An `AcquireWrite` socket (the caller owns the descriptor), or nil when none can be had.
    func acquireWrite(_ characteristic: FleetCharacteristic) async -> (descriptor: Int32, mtu: UInt16)?
}

extension GATTWriteChannel {
    /// A channel whose writes take no time (tests' fakes).
    public func writeValue(
        _ bytes: [UInt8], to characteristic: FleetCharacteristic, withResponse: Bool, within timeout: Duration
    ) async throws(DeviceEvent.Failure) {
        try await writeValue(bytes, to: characteristic, withResponse: withResponse)
    }
}
