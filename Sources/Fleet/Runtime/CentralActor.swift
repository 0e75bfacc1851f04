import BlueZ
import DBus
import FleetCore
import Logging

/// One per adapter: the only code that calls `Adapter1` and the only starter of connection
/// attempts on that adapter.
///
/// Discovery runs only while some device that is wanted is still missing (`startResolve` /
/// `stopResolve` keep that set) or the pool has free slots on this adapter and looks for
/// candidates. The pool's search uses the configured service-UUID filter and RSSI threshold
/// (`scan_services`, `min_rssi`); while a wanted device is missing, discovery is unfiltered: a
/// pinned or restored device is looked for whatever it advertises (a thermometer need not
/// advertise 0x1809, nor anything `scan_services` names) and however weak it is heard, and pool
/// admission still applies its own filters to what else appears.
public actor CentralActor {
    public nonisolated let adapter: AdapterID
    public nonisolated let path: DBusObjectPath
    private let client: BlueZClient
    private let logger: Logger
    private var scanUUIDs: [String]
    private var minimumRSSI: Int16?
    private var missing: Set<DeviceID> = []
    /// The pool has room and wants candidates: discover even when no known device is missing.
    private var poolSearching = false
    private var discovering = false
    private var updatingDiscovery = false
    /// The filter bluetoothd last accepted from us (nil: none set yet, or discovery stopped).
    private var appliedFilter: DiscoveryFilter?

    /// A discovery filter as `SetDiscoveryFilter` takes it (empty UUIDs: any device).
    struct DiscoveryFilter: Equatable {
        var uuids: [String]
        var minimumRSSI: Int16?
    }

    /// What discovery should run with now (see the type's comment).
    private var wantedFilter: DiscoveryFilter {
        missing.isEmpty ? DiscoveryFilter(uuids: scanUUIDs, minimumRSSI: minimumRSSI) : DiscoveryFilter(uuids: [], minimumRSSI: nil)
    }
    /// The last discovery error, for status and logs.
    public private(set) var lastDiscoveryError: BlueZError?
    /// Whether bluetoothd offers `Adapter1.ConnectDevice` here: unknown until tried, false
    /// once it answered `UnknownMethod` (stock bluetoothd runs without `--experimental`).
    /// Forgotten when bluetoothd or the adapter goes (it may come back with other flags).
    public private(set) var connectDeviceOffered: Bool?
    /// Discovery calls (`SetDiscoveryFilter`, `StartDiscovery`, `StopDiscovery`) that failed, an
    /// `InProgress` answer to `StartDiscovery` (discovery already runs for us) not counted.
    public private(set) var discoveryErrors = 0

    public init(adapter: AdapterID, client: BlueZClient, scanUUIDs: [String], minimumRSSI: Int16?, logger: Logger) throws {
        self.adapter = adapter
        self.logger = logger
        self.path = try DBusObjectPath("/org/bluez/" + adapter.name)
        self.client = client
        self.scanUUIDs = scanUUIDs
        self.minimumRSSI = minimumRSSI
    }

    /// Counts a failed discovery call and logs it: each new error, and a repeated one at the
    /// 1st, 2nd, 4th, 8th, … occurrence in a row, so an adapter that keeps refusing is seen
    /// without flooding the journal.
    private func discoveryFailed(_ call: String, _ error: BlueZError) {
        discoveryErrors += 1
        let repeated = lastDiscoveryError == error
        lastDiscoveryError = error
        repeatedDiscoveryErrors = repeated ? repeatedDiscoveryErrors + 1 : 1
        guard repeatedDiscoveryErrors & (repeatedDiscoveryErrors - 1) == 0 else { return }
        logger.warning("discovery call failed", metadata: [
            "event": "discovery_failed", "adapter": "\(adapter)", "call": "\(call)", "bluez_error": "\(error.name): \(error.message)",
            "error_kind": "\(error.kind)", "repeated": "\(repeatedDiscoveryErrors)",
        ])
    }

    private var repeatedDiscoveryErrors = 0

    public var isDiscovering: Bool { discovering }

    public func startResolve(_ device: DeviceID) async {
        missing.insert(device)
        await updateDiscovery()
    }

    public func stopResolve(_ device: DeviceID) async {
        missing.remove(device)
        await updateDiscovery()
    }

    /// Applies a reloaded discovery filter; a running discovery is restarted with it.
    public func updateFilter(scanUUIDs: [String], minimumRSSI: Int16?) async {
        guard scanUUIDs != self.scanUUIDs || minimumRSSI != self.minimumRSSI else { return }
        self.scanUUIDs = scanUUIDs
        self.minimumRSSI = minimumRSSI
        await updateDiscovery()
    }

    /// Whether the pool wants new candidates from this adapter (it has free slots).
    public func setPoolSearching(_ searching: Bool) async {
        guard searching != poolSearching else { return }
        poolSearching = searching
        await updateDiscovery()
    }

    /// bluetoothd restarted or the adapter lost power: discovery stopped with it.
    public func discoveryStopped() {
        discovering = false
        appliedFilter = nil
        connectDeviceOffered = nil
    }

    /// Starts discovery again if someone is still missing (after bluetoothd or the adapter
    /// came back).
    public func resume() async {
        await updateDiscovery()
    }

    /// Brings discovery in line with what is wanted (a missing device, or a pool with room),
    /// with the filter that is wanted. One update runs at a time, and it checks again after
    /// every call it awaited: the actor is reentrant, so a device can be found (and nothing be
    /// wanted any more) while discovery is still being started, and discovery must not then
    /// stay on for nobody, flooding the fleet with advertisements.
    private func updateDiscovery() async {
        guard !updatingDiscovery else { return }  // the running update sees the change
        updatingDiscovery = true
        defer { updatingDiscovery = false }
        while true {
            let wanted = !missing.isEmpty || poolSearching
            if wanted == discovering {
                // Running with another filter than the one wanted: bluetoothd applies a new
                // filter to a running discovery.
                let filter = wantedFilter
                guard discovering, appliedFilter != filter else { return }
                do {
                    try await client.setDiscoveryFilter(adapter: path, uuids: filter.uuids, minimumRSSI: filter.minimumRSSI)
                    appliedFilter = filter
                } catch {
                    discoveryFailed("SetDiscoveryFilter", error)
                    return
                }
                continue
            }
            if discovering {
                discovering = false
                appliedFilter = nil
                do {
                    try await client.stopDiscovery(adapter: path)
                } catch {
                    // Discovery is ours no more either way (bluetoothd stops it when the client
                    // that started it goes); said, not retried.
                    discoveryFailed("StopDiscovery", error)
                }
                continue
            }
            let filter = wantedFilter
            var call = "SetDiscoveryFilter"
            do {
                try await client.setDiscoveryFilter(adapter: path, uuids: filter.uuids, minimumRSSI: filter.minimumRSSI)
                appliedFilter = filter
                call = "StartDiscovery"
                try await client.startDiscovery(adapter: path)
                discovering = true
                lastDiscoveryError = nil
                repeatedDiscoveryErrors = 0
            } catch {
                // InProgress means it is already running for us.
                guard error.kind == .inProgress, call == "StartDiscovery" else {
                    // Tried again at the next change (a device missing, an adapter powered, …).
                    discoveryFailed(call, error)
                    return
                }
                discovering = true
            }
        }
    }

    /// `Device1.Connect`, or `Adapter1.ConnectDevice` when bluetoothd has no object for the
    /// device on this adapter (it forgets unbonded devices after `TemporaryTimeout`). Where
    /// ConnectDevice is not offered (`UnknownMethod`: bluetoothd without `--experimental`, as
    /// Debian ships it), that is remembered and the answer is `needsDiscovery`, never an error
    /// of the device's. `timeout` bounds the call (the device's class `connect` timeout and a
    /// margin).
    public func connect(
        _ device: DeviceID, objectPath: DBusObjectPath?, timeout: Duration = .seconds(45)
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
