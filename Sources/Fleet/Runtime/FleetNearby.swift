import FleetControl
import FleetCore

/// One device object bluetoothd holds, and when bluetoothd last reported hearing it: what
/// `FleetBluetooth.sightings()` reports, for `FleetOrchestrator.nearby()`.
public struct FleetSighting: Sendable, Hashable {
    public var id: DeviceID
    /// Its object on one adapter (name, services, RSSI, whether linked).
    public var object: FleetStateMachine.DeviceObject
    public var paired: Bool
    /// When bluetoothd last reported hearing it advertise (an RSSI or TX power), on the fleet's
    /// clock; nil when it has not since its objects were read. bluetoothd reports an RSSI again
    /// only when it moved by 8 dBm or more (src/device.c, `RSSI_THRESHOLD`), and clears it when
    /// discovery stops, so a device heard steadily can show an old report, and a scan makes every
    /// device it hears report anew.
    public var reportedAt: MonotonicInstant?

    public init(id: DeviceID, object: FleetStateMachine.DeviceObject, paired: Bool = false, reportedAt: MonotonicInstant? = nil) {
        self.id = id
        self.object = object
        self.paired = paired
        self.reportedAt = reportedAt
    }
}

/// A device the radio hears that is not in the fleet, from the daemon's own view of bluetoothd
/// (no scan of its own): `wearfleetctl nearby`, D-Bus `Nearby`, the gateway's `nearby` request.
/// A user with a new strap in hand learns its address and type here, and whether the pool
/// would take it.
public struct FleetNearbyDevice: Sendable, Hashable {
    public var id: DeviceID
    public var name: String?
    /// The strongest RSSI among the adapters that hold it (dBm), if any reported one.
    public var rssi: Int?
    /// How long ago bluetoothd last reported hearing it (see `FleetSighting.reportedAt`: not
    /// every advertisement is reported); nil when not since its objects were read (a device it
    /// remembers from earlier).
    public var lastReported: Duration?
    /// Advertised or resolved service UUIDs.
    public var services: [String]
    /// The adapters whose bluetoothd objects hold it.
    public var adapters: [AdapterID]
    /// Linked to this gateway by another program (the fleet does not manage it).
    public var connected: Bool
    public var paired: Bool
    /// The class the pool would give it (`default` when its rules name none); nil when the pool
    /// is off or would not take it.
    public var poolClass: String?

    public init(
        id: DeviceID, name: String? = nil, rssi: Int? = nil, lastReported: Duration? = nil, services: [String] = [],
        adapters: [AdapterID] = [], connected: Bool = false, paired: Bool = false, poolClass: String? = nil
    ) {
        self.id = id
        self.name = name
        self.rssi = rssi
        self.lastReported = lastReported
        self.services = services
        self.adapters = adapters
        self.connected = connected
        self.paired = paired
        self.poolClass = poolClass
    }

    /// The devices of `sightings` that `fleet` does not have, one per identity (its objects on
    /// several adapters merged), strongest first, then by address; `now` on the sightings' clock.
    public static func list(
        _ sightings: [FleetSighting], excluding fleet: FleetStateMachine, now: MonotonicInstant
    ) -> [FleetNearbyDevice] {
        var byID: [DeviceID: FleetNearbyDevice] = [:]
        var heard: [DeviceID: MonotonicInstant] = [:]
        for sighting in sightings where fleet.devices[sighting.id] == nil {
            var device = byID[sighting.id] ?? FleetNearbyDevice(id: sighting.id)
            let object = sighting.object
            device.name = device.name ?? object.name
            if let rssi = object.rssi { device.rssi = max(device.rssi ?? rssi, rssi) }
            for service in object.services where !device.services.contains(service) { device.services.append(service) }
            if !device.adapters.contains(object.adapter) { device.adapters.append(object.adapter) }
            device.connected = device.connected || object.connected
            device.paired = device.paired || sighting.paired
            if let at = sighting.reportedAt, heard[sighting.id].map({ at > $0 }) ?? true { heard[sighting.id] = at }
            byID[sighting.id] = device
        }
        for (id, var device) in byID {
            device.adapters.sort()
            device.services.sort()
            device.lastReported = heard[id].map { max(.zero, now.duration(since: $0)) }
            device.poolClass = fleet.poolCandidacy(name: device.name, services: device.services, rssi: device.rssi).map {
                $0.className ?? FleetStateMachine.defaultClassName
            }
            byID[id] = device
        }
        return byID.values.sorted { left, right in
            switch (left.rssi, right.rssi) {
            case let (l?, r?) where l != r: l > r
            case (_?, nil): true
            case (nil, _?): false
            default: left.id < right.id
            }
        }
    }
}

extension FleetNearbyDevice {
    /// The device as `nearby` answers it (`CommandCatalogue.nearbyFields`).
    public var record: CommandRecord {
        CommandRecord([
            ("address", .string(id.address.description)),
            ("address_type", .string(id.addressType.rawValue)),
            ("name", name.map(CommandRecord.Value.string)),
            ("rssi", rssi.map(CommandRecord.Value.integer)),
            ("last_report_seconds", lastReported.map { .number(Double($0.components.seconds) + Double($0.components.attoseconds) / 1e18) }),
            ("services", .strings(services)),
            ("adapters", .strings(adapters.map(\.name))),
            ("connected", .bool(connected)),
            ("paired", .bool(paired)),
            ("pool_class", poolClass.map(CommandRecord.Value.string)),
        ])
    }
}
