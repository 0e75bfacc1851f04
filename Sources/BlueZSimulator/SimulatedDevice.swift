import DBus
import DeterministicRandom
import GATT

/// Run-time state of one simulated wearable, owned by `BlueZSimulator`.
struct SimulatedDevice {
    var configuration: WearableConfiguration
    var path: DBusObjectPath
    var adapterPath: DBusObjectPath
    /// True while its Device1 object exists on the bus.
    var exported = false
    var lastSeen: ContinuousClock.Instant = .now
    var link: LinkState = .disconnected
    /// Bumped on every link change: delayed work started under an older epoch gives up.
    var linkEpoch = 0
    var paired: Bool
    var bonded: Bool
    var inRange: Bool
    var faults: FaultSettings
    var random: SeededRandom
    var signals: WearableSignals
    var services: [GATTServiceLayout]
    /// Exported characteristics of the current connection, by path.
    var characteristics: [DBusObjectPath: SimulatedCharacteristic] = [:]
    /// Exported GATT object paths of the current connection, in export order.
    var gattPaths: [DBusObjectPath] = []
    var rssi: Int16
    var linkLossTask: Task<Void, Never>?

    init(configuration: WearableConfiguration, adapterPath: DBusObjectPath, timings: SimulatorTimings) throws {
        self.configuration = configuration
        self.adapterPath = adapterPath
        path = try adapterPath.appending(DeviceAddress.pathElement(configuration.address))
        paired = configuration.bonded
        bonded = configuration.bonded
        inRange = configuration.inRange
        faults = configuration.faults
        random = SeededRandom(seed: configuration.seed)
        signals = WearableSignals(
            seed: configuration.seed ^ 0x5EED, motionRateHz: configuration.notifyHz, motionPayloadSize: configuration.payloadSize,
            timestamps: configuration.timestamps)
        services = WearableProfile.services(for: configuration, timings: timings)
        rssi = Int16(clamping: configuration.rssi)
    }

    var address: String { configuration.address }

    /// The service UUIDs the device advertises.
    var advertisedUUIDs: [String] {
        switch configuration.kind {
        case .heartRateStrap: return [BluetoothUUID.heartRateService.description]
        case .watch: return [BluetoothUUID.heartRateService.description, BluetoothUUID.pulseOximeterService.description]
        case .motionBand: return [BluetoothUUID.motionBandService.description]
        }
    }

    /// Every service UUID, as BlueZ lists them once GATT is resolved.
    var resolvedUUIDs: [String] { Array(Set(services.map(\.uuid.description) + advertisedUUIDs)).sorted() }

    /// A new RSSI reading near the device's mean (BlueZ announces each change).
    mutating func nextRSSI() -> Int16 {
        let base = configuration.rssi
        var next = Int16(clamping: base + Int(random.next() % 9) - 4)
        if next == rssi { next = next > Int16(base) ? next - 1 : next + 1 }
        rssi = next
        return next
    }
}
