import BlueZ
import DBus
import FleetCore
import Logging

/// One per adapter: the only code that calls `Adapter1` (discovery calls, `ConnectDevice`) and
/// the only starter of connection attempts on that adapter.
///
/// It decides nothing about discovery: the fleet machine asks for each call (`perform`), one at
/// a time per adapter, and hears its outcome. What it keeps is what bluetoothd taught it about
/// connecting by address (`connectDeviceOffered`).
public actor CentralActor {
    public nonisolated let adapter: AdapterID
    public nonisolated let path: DBusObjectPath
    private let client: BlueZClient
    private let logger: Logger
    /// Whether bluetoothd offers `Adapter1.ConnectDevice` here: unknown until tried, false
    /// once it answered `UnknownMethod` (stock bluetoothd runs without `--experimental`).
    /// Forgotten when bluetoothd or the adapter goes (it may come back with other flags).
    public private(set) var connectDeviceOffered: Bool?

    public init(adapter: AdapterID, client: BlueZClient, logger: Logger) throws {
        self.adapter = adapter
        self.logger = logger
        self.path = try DBusObjectPath("/org/bluez/" + adapter.name)
        self.client = client
    }

    /// bluetoothd restarted or the adapter lost power: what it said about `ConnectDevice` may
    /// not hold any more.
    public func stopped() {
        connectDeviceOffered = nil
    }

    /// One discovery call, as the fleet machine asked for it.
    public nonisolated func perform(_ call: DiscoveryCall) async throws(BlueZError) {
        switch call {
        case .setFilter(let filter):
            try await client.setDiscoveryFilter(adapter: path, uuids: filter.uuids, minimumRSSI: filter.minimumRSSI)
        case .start:
            try await client.startDiscovery(adapter: path)
        case .stop:
            try await client.stopDiscovery(adapter: path)
        }
    }

    /// `Device1.Connect`, or `Adapter1.ConnectDevice` when bluetoothd has no object for the
    /// device on this adapter (it forgets unbonded devices after `TemporaryTimeout`). Where
    /// ConnectDevice is not offered (`UnknownMethod`: bluetoothd without `--experimental`, as
    /// Debian ships it), that is remembered and the answer is `needsDiscovery`, never an error
    /// of the device's. `timeout` bounds the call (the device's class `connect` timeout and a
    /// margin).
    ///
    /// Nothing is sent to an adapter the mirror shows off or powering off, or while bluetoothd
    /// is gone (`adapterUnavailable`): the fleet granted the attempt from its records, which
    /// learn of a power-off only after the mirror does. A call that fails once the mirror shows
    /// either was failed by it, and is answered the same way.
    public func connect(
        _ device: DeviceID, objectPath: DBusObjectPath?, timeout: Duration = .seconds(45)
    ) async throws(BlueZError) -> ConnectOutcome {
        guard await client.isUsable(adapter: path) else { return .adapterUnavailable }
        do {
            return try await connectCall(device, objectPath: objectPath, timeout: timeout)
        } catch {
            // When the reply overtakes the news instead, the fleet explains the failure as soon as
            // the news arrives (`linkLossExplained`), and the device machine takes it back.
            guard await client.isUsable(adapter: path) else { return .adapterUnavailable }
            throw error
        }
    }

    private func connectCall(
        _ device: DeviceID, objectPath: DBusObjectPath?, timeout: Duration
    ) async throws(BlueZError) -> ConnectOutcome {
        if let objectPath {
            try await client.connect(device: objectPath, timeout: timeout)
            return .connected
        }
        guard connectDeviceOffered != false else { return .needsDiscovery }
        do {
            _ = try await client.connectDevice(
                adapter: path, address: device.address.description, addressType: device.addressType.rawValue, timeout: timeout)
            connectDeviceOffered = true
            return .connected
        } catch where error.name == DBusError.unknownMethod {
            if connectDeviceOffered == nil {
                logger.notice(
                    "bluetoothd offers no Adapter1.ConnectDevice (it runs without --experimental): devices it forgot are found by discovery",
                    metadata: ["adapter": "\(adapter)", "event": "connect_device_unavailable", "bluez_error": "\(error.name)"])
            }
            connectDeviceOffered = false
            return .needsDiscovery
        }
    }
}
