import DBus
import DeterministicRandom
import GATT

/// One adapter's `Device1` object for a device: bluetoothd keeps a separate `btd_device` per
/// adapter that heard it, each with its own path, RSSI, pairing and TemporaryTimeout.
struct SimulatedDeviceObject {
    let adapter: String
    let adapterPath: DBusObjectPath
    let path: DBusObjectPath
    /// True while the object exists on the bus.
    var exported = false
    /// Its removal from the bus is under way (`exported` is false already). Nothing exports it
    /// again until that is done: the simulator's actor is reentrant, and an export sent to the
    /// bus connection while its unexport is still queued there could land first, be merged into
    /// the object on its way out and vanish with it — leaving the simulator sure the object is
    /// there and every client sure it is not.
    var unexporting = false
    /// When this adapter last heard the device (or its link through this adapter ended).
    var lastSeen: ContinuousClock.Instant = .now
    /// This adapter's mean RSSI for the device (changed at run time only in a shared world:
    /// `SetWorldRSSI`), and its last reading.
    var meanRSSI: Int
    var rssi: Int16
    var paired: Bool
    var bonded: Bool
    /// BlueZ's temporary flag: a device only heard is temporary and expires; bonding, and a
    /// client's Connect or Pair, make it permanent (stored on disk, loaded again after a
    /// restart) unless its address is private (`btd_device_set_temporary`).
    var temporary: Bool
}

/// Run-time state of one simulated wearable, owned by `BlueZSimulator`.
///
/// The device is one peripheral: it holds one link at a time (`link`, through `linkAdapter`),
/// while every adapter that hears it has an object of its own (`objects`).
struct SimulatedDevice {
    var configuration: WearableConfiguration
    /// One per adapter that hears the device, by adapter name.
    var objects: [String: SimulatedDeviceObject]
    var link: LinkState = .disconnected
    /// The adapter of the link or of the attempt in flight.
    var linkAdapter: String?
    /// The adapter whose object the GATT objects are exported under: the link's, or the one
    /// whose cache kept them after a disconnect (`[GATT] Cache`).
    var gattAdapter: String?
    /// The missing-service fault the exported GATT objects were built with.
    var gattMissingService: BluetoothUUID?
    /// Bumped on every link change: delayed work started under an older epoch gives up.
    var linkEpoch = 0
    /// The link outlived the bluetoothd that made it (killed): the kernel keeps it until its
    /// `leftBehindLinkTimeout`, and the bluetoothd of now knows it only from the kernel, with no
    /// ATT bearer on it (services not resolved, no GATT objects).
    var linkLeftBehind = false
    var inRange: Bool
    var faults: FaultSettings
    var random: SeededRandom
    var signals: WearableSignals
    var services: [GATTServiceLayout]
    /// Exported characteristics (of the link, or cached), by path.
    var characteristics: [DBusObjectPath: SimulatedCharacteristic] = [:]
    /// Exported GATT object paths, in export order.
    var gattPaths: [DBusObjectPath] = []
    var linkLossTask: Task<Void, Never>?
    /// The link is encrypted: with the bond's key at connection (bluetoothd connects a paired LE
    /// device at security medium, `device_connect_le` in src/device.c), or by a pairing on it.
    var linkEncrypted = false
    /// A pairing bluetoothd started on the link to raise its security (an ATT request refused
    /// for insufficient authentication); requests that meet the same refusal meanwhile wait for it.
    var securityElevation: Task<Bool, Never>?
    /// A blood-pressure cuff's or a weight scale's measurements, clock and sleep; nil for others.
    var measurement: MeasurementState?

    init(configuration: WearableConfiguration, adapterPaths: [String: DBusObjectPath], timings: SimulatorTimings) throws {
        self.configuration = configuration
        var objects: [String: SimulatedDeviceObject] = [:]
        for (rank, adapter) in configuration.heardBy.enumerated() {
            guard let adapterPath = adapterPaths[adapter] else { continue }
            let mean = configuration.rssi - 6 * rank
            objects[adapter] = SimulatedDeviceObject(
                adapter: adapter, adapterPath: adapterPath,
                path: try adapterPath.appending(DeviceAddress.pathElement(configuration.address)), meanRSSI: mean,
                rssi: Int16(clamping: mean), paired: configuration.bonded, bonded: configuration.bonded,
                temporary: !configuration.bonded)
        }
        self.objects = objects
        inRange = configuration.inRange
        faults = configuration.faults
        random = SeededRandom(seed: configuration.seed)
        signals = WearableSignals(
            seed: configuration.seed ^ 0x5EED, motionRateHz: configuration.notifyHz, motionPayloadSize: configuration.payloadSize,
            timestamps: configuration.timestamps)
        services = WearableProfile.services(for: configuration, timings: timings)
        if configuration.kind.isMeasurementDevice {
            measurement = MeasurementState(awake: configuration.wake == nil, clock: DeviceClock(poweredOnAt: .now))
        }
    }

    /// Asleep devices neither advertise nor answer a connection; only measurement devices with a
    /// wake schedule sleep.
    var isAwake: Bool { measurement?.awake ?? true }

    /// Heard by a scan, and answering a connection attempt.
    var advertises: Bool { inRange && isAwake }

    /// The object of the adapter that hears the device best (its `adapter`).
    var home: SimulatedDeviceObject? { objects[configuration.adapter] }

    /// The object the link (or attempt) goes through.
    var linkObject: SimulatedDeviceObject? { linkAdapter.flatMap { objects[$0] } }

    /// The adapter whose object is at `path`.
    func adapter(ofObjectAt path: DBusObjectPath) -> String? {
        objects.values.first { $0.path == path }?.adapter
    }

    /// A resolvable or non-resolvable private address (random, top bits 00 or 01): BlueZ never
    /// makes such a device permanent (`device_address_is_private` in `src/device.c`).
    var hasPrivateAddress: Bool {
        guard configuration.addressType == "random", let first = UInt8(configuration.address.prefix(2), radix: 16) else {
            return false
        }
        return first >> 6 < 2
    }

    /// Whether the link is up through `adapter`.
    func isLinked(through adapter: String) -> Bool { link.isUp && linkAdapter == adapter }

    var address: String { configuration.address }

    /// The service UUIDs the device advertises.
    var advertisedUUIDs: [String] {
        switch configuration.kind {
        case .heartRateStrap: return [BluetoothUUID.heartRateService.description]
        case .watch: return [BluetoothUUID.heartRateService.description, BluetoothUUID.pulseOximeterService.description]
        case .motionBand: return [BluetoothUUID.motionBandService.description]
        case .bloodPressureCuff: return [BluetoothUUID.bloodPressureService.description]
        case .weightScale: return [BluetoothUUID.weightScaleService.description]
        }
    }

    /// Every service UUID, as BlueZ lists them once GATT is resolved.
    var resolvedUUIDs: [String] { Array(Set(services.map(\.uuid.description) + advertisedUUIDs)).sorted() }

    /// A new RSSI reading on `adapter` near that adapter's mean (BlueZ announces each change).
    mutating func nextRSSI(on adapter: String) -> Int16? {
        guard let object = objects[adapter] else { return nil }
        let base = object.meanRSSI
        var next = Int16(clamping: base + Int(random.next() % 9) - 4)
        if next == object.rssi { next = next > Int16(clamping: base) ? next - 1 : next + 1 }
        objects[adapter]?.rssi = next
        return next
    }
}
