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
    /// The adapter is off or powering off (`PowerState` "on-disabling"), or bluetoothd is gone,
    /// as the BlueZ mirror shows it: no `Connect` was sent, or the one sent failed because of
    /// that. Not the device's failure, and no event of its own: the mirror hears bluetoothd
    /// before the fleet's records do, and the fleet tells the device machine the cause
    /// (`adapterUnpowered`, `bluetoothdVanished`), which ends the attempt recording no failure.
    case adapterUnavailable
}

/// The operations a `DeviceActor` asks of the outside world for one device. (Looking for a
/// device is not one of them: its machine tells the fleet, which drives discovery.)
///
/// BlueZ has one object per adapter that heard a device, so every operation on a link names
/// the adapter the link goes through (`on:`; nil only where no link is known, which picks the
/// connected object). The BlueZ implementation maps them onto `Device1`/`GattCharacteristic1`
/// calls on that adapter's object; tests script a fake. Asynchronous facts (the link came up
/// or went down, the device object appeared, a notification arrived) do not come back through
/// here: the BlueZ event router feeds them to the actor as `DeviceEvent`s.
public protocol DeviceTransport: Sendable {
    /// `Device1.Connect` through `adapter`'s object (or `ConnectDevice` on `adapter` when it
    /// has none and bluetoothd offers it); returns when BlueZ replied.
    func connect(_ device: DeviceID, adapter: AdapterID) async throws(TransportFailure) -> ConnectOutcome
    /// Like `connect(_:adapter:)`, with the call bounded by the device's class `connect` timeout
    /// (and a margin, so the machine's own timer decides) rather than a fixed one.
    func connect(_ device: DeviceID, adapter: AdapterID, within timeout: Duration) async throws(TransportFailure) -> ConnectOutcome
    /// Abort an in-flight connect on `adapter`.
    func cancelConnect(_ device: DeviceID, on adapter: AdapterID?) async
    /// `Device1.Pair` on `adapter`'s object (nil: the connected one), the daemon's agent
    /// answering; returns once bonded. bluetoothd's `AlreadyExists` (bonded already) is success.
    func pair(_ device: DeviceID, on adapter: AdapterID?) async throws(TransportFailure)
    /// A write with response to a characteristic under `adapter`'s object for the device (nil:
    /// the connected one), outside the outgoing queues: the device's own setup (its clock).
    func writeForSetup(_ device: DeviceID, characteristic: String, bytes: [UInt8], on adapter: AdapterID?) async throws(TransportFailure)
    func disconnect(_ device: DeviceID, on adapter: AdapterID?) async
    /// Waits for `ServicesResolved` and the GATT objects, then lists the UUIDs present.
    func awaitServices(_ device: DeviceID, on adapter: AdapterID?) async throws(TransportFailure)
        -> (services: Set<String>, characteristics: Set<String>)
    /// Like `awaitServices(_:on:)`, but after `ServicesResolved` waits (a bounded while) for the
    /// services and characteristics the device's class requires, not just for any: BlueZ can
    /// announce `ServicesResolved` before it has exported every GATT object.
    func awaitServices(_ device: DeviceID, on adapter: AdapterID?, requiring: GATTRequirement) async throws(TransportFailure)
        -> (services: Set<String>, characteristics: Set<String>)
    func read(_ device: DeviceID, characteristic: String, on adapter: AdapterID?) async throws(TransportFailure) -> [UInt8]
    /// Whether the transport hands every value it reads to the value pipeline by itself before
    /// `read` returns: bluetoothd announces each value it reads as a change of `Value`
    /// (src/gatt-client.c, `chrc_read_cb`), which takes the notifications' way. A reader then
    /// must not ingest the bytes again, or every read would be two values.
    var readValuesAnnounced: Bool { get }
    func subscribe(_ device: DeviceID, characteristic: String, via path: DeviceEffect.NotifyPath, on adapter: AdapterID?)
        async throws(TransportFailure)
    /// Like `subscribe(_:characteristic:via:on:)`, with the call bounded by the class's
    /// `subscribe` timeout (and a margin).
    func subscribe(
        _ device: DeviceID, characteristic: String, via path: DeviceEffect.NotifyPath, on adapter: AdapterID?,
        within timeout: Duration
    ) async throws(TransportFailure)
    /// Ends notifications of the characteristic (StopNotify, or closing its notify socket).
    func unsubscribe(_ device: DeviceID, characteristic: String, via path: DeviceEffect.NotifyPath, on adapter: AdapterID?) async
}

extension DeviceTransport {
    /// Transports other than bluetoothd's (test doubles) announce nothing by themselves.
    public var readValuesAnnounced: Bool { false }

    /// Disconnects the device's connected object, whichever adapter it is on.
    public func disconnect(_ device: DeviceID) async {
        await disconnect(device, on: nil)
    }
}

/// The GATT objects a device's class cannot do without (`requiredServices`,
/// `requiredCharacteristics`), as lower-case 128-bit UUIDs. Empty: any characteristic will do.
public struct GATTRequirement: Sendable, Hashable {
    public var services: Set<String>
    public var characteristics: Set<String>

    public init(services: Set<String> = [], characteristics: Set<String> = []) {
        self.services = services
        self.characteristics = characteristics
    }

    public init(_ configuration: DeviceStateMachine.Configuration) {
        self.init(services: configuration.requiredServices, characteristics: configuration.requiredCharacteristics)
    }

    public var isEmpty: Bool { services.isEmpty && characteristics.isEmpty }

    /// Whether objects with these UUIDs meet it.
    public func isMet(services present: Set<String>, characteristics found: Set<String>) -> Bool {
        services.isSubset(of: present) && characteristics.isSubset(of: found)
    }
}

extension DeviceTransport {
    /// How long a call bounded by a class timeout may take: the timeout and a margin, so the
    /// device machine's timer, not the call, decides that the operation took too long.
    public static func callTimeout(within timeout: Duration) -> Duration {
        timeout + .seconds(1)
    }

    /// A transport whose calls take no time (tests' fakes).
    public func connect(_ device: DeviceID, adapter: AdapterID, within timeout: Duration) async throws(TransportFailure)
        -> ConnectOutcome
    {
        try await connect(device, adapter: adapter)
    }

    public func subscribe(
        _ device: DeviceID, characteristic: String, via path: DeviceEffect.NotifyPath, on adapter: AdapterID?,
        within timeout: Duration
    ) async throws(TransportFailure) {
        try await subscribe(device, characteristic: characteristic, via: path, on: adapter)
    }

    /// A transport whose objects are all there once services are resolved (tests' fakes).
    public func awaitServices(_ device: DeviceID, on adapter: AdapterID?, requiring: GATTRequirement) async throws(TransportFailure)
        -> (services: Set<String>, characteristics: Set<String>)
    {
        try await awaitServices(device, on: adapter)
    }
}
