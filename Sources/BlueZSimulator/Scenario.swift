import DeterministicRandom
import Foundation
import GATT

/// A fleet to simulate: adapters, wearables, standing faults and a fault schedule.
///
/// Read from JSON (`Scenario.load(from:)`) or built by `Scenario.quick(devices:adapters:)`.
/// `resolved()` turns it into concrete configurations; the same scenario and seed always resolve
/// to the same addresses, names and per-device random streams.
public struct Scenario: Codable, Sendable, Hashable {
    public var seed: UInt64?
    public var timings: SimulatorTimings?
    /// bluetoothd's own settings; absent: stock Debian 12 (BlueZ 5.66).
    public var bluez: BlueZSettings?
    public var adapters: [AdapterSpec]?
    public var devices: [DeviceSpec]
    /// Fleet-wide standing faults (each device's own `faults` override them).
    public var faults: FaultSettings?
    public var schedule: [ScheduledFault]?
    /// Wearables that pass by, each heard for a while and then gone for good.
    public var passersBy: PassersBy?
    /// The gateways of a world that several instances share (`WorldSpec`); used only when an
    /// instance is started as one of them, ignored otherwise.
    public var world: WorldSpec?

    public init(
        seed: UInt64? = nil, timings: SimulatorTimings? = nil, bluez: BlueZSettings? = nil, adapters: [AdapterSpec]? = nil,
        devices: [DeviceSpec], faults: FaultSettings? = nil, schedule: [ScheduledFault]? = nil, passersBy: PassersBy? = nil,
        world: WorldSpec? = nil
    ) {
        self.world = world
        self.passersBy = passersBy
        self.seed = seed
        self.timings = timings
        self.bluez = bluez
        self.adapters = adapters
        self.devices = devices
        self.faults = faults
        self.schedule = schedule
    }

    /// `count` wearables cycling strap, watch, motion band (the bands at 50, 100, 200 Hz), each
    /// heard by every adapter and strongest on one of them, taken round-robin over `adapters` adapters with `slots` connection slots each. `bonded` devices
    /// are known from the start (a gateway's enrolled fleet); unbonded ones appear only while
    /// discovering and expire after TemporaryTimeout.
    public static func quick(
        devices count: Int, adapters: Int = 1, slots: Int = 5, seed: UInt64 = 1, bonded: Bool = false
    ) -> Scenario {
        let kinds = WearableKind.streamingKinds
        let rates: [Double] = [50, 100, 200]
        let devices = (0..<max(0, count)).map { index in
            DeviceSpec(
                kind: kinds[index % kinds.count], bonded: bonded,
                notifyHz: kinds[index % kinds.count] == .motionBand ? rates[(index / kinds.count) % rates.count] : nil)
        }
        let adapterSpecs = (0..<max(1, adapters)).map { AdapterSpec(name: "hci\($0)", slots: slots) }
        return Scenario(seed: seed, adapters: adapterSpecs, devices: devices)
    }

    /// Reads a JSON scenario file.
    public static func load(from url: URL) throws -> Scenario {
        let data = try Data(contentsOf: url)
        do {
            return try JSONDecoder().decode(Scenario.self, from: data)
        } catch let error as DecodingError {
            throw ScenarioError.invalid(url.path, Self.describe(error))
        }
    }

    private static func describe(_ error: DecodingError) -> String {
        func path(_ context: DecodingError.Context) -> String {
            context.codingPath.map { $0.intValue.map { "[\($0)]" } ?? ".\($0.stringValue)" }.joined()
        }
        switch error {
        case .keyNotFound(let key, let context): return "\(path(context)): missing key '\(key.stringValue)'"
        case .typeMismatch(_, let context), .valueNotFound(_, let context), .dataCorrupted(let context):
            return "\(path(context)): \(context.debugDescription)"
        @unknown default: return "\(error)"
        }
    }

    // MARK: - Resolution

    /// Concrete adapters and wearables. Throws `ScenarioError` for bad addresses, unknown
    /// adapters or duplicate devices.
    public func resolved() throws -> (adapters: [AdapterConfiguration], devices: [WearableConfiguration]) {
        let seed = self.seed ?? 1
        var random = SeededRandom(seed: seed)
        let specs = adapters ?? [AdapterSpec(name: "hci0")]
        var adapterConfigs: [AdapterConfiguration] = []
        for spec in specs {
            guard spec.name.hasPrefix("hci"), Int(spec.name.dropFirst(3)) != nil else {
                throw ScenarioError.invalid("adapters", "adapter name '\(spec.name)' is not hciN")
            }
            let generated = DeviceAddress.generated(public: true, using: &random)
            let address = try spec.address.map { try DeviceAddress.normalized($0) } ?? generated
            adapterConfigs.append(
                AdapterConfiguration(name: spec.name, address: address, slots: max(1, spec.slots ?? 5), powered: spec.powered ?? true))
        }
        guard !adapterConfigs.isEmpty else { throw ScenarioError.invalid("adapters", "no adapter") }
        if let passersBy {
            guard passersBy.count >= 0, passersBy.count < 1 << 32 else {
                throw ScenarioError.invalid("passersBy.count", "must be 0 to 2^32 - 1")
            }
            guard passersBy.perSecond > 0, passersBy.perSecond.isFinite else {
                throw ScenarioError.invalid("passersBy.perSecond", "must be a positive number")
            }
            guard passersBy.dwell > 0, passersBy.dwell.isFinite else {
                throw ScenarioError.invalid("passersBy.dwell", "must be a positive number of seconds")
            }
            guard (passersBy.startAfter ?? 0) >= 0, (passersBy.startAfter ?? 0).isFinite else {
                throw ScenarioError.invalid("passersBy.startAfter", "must be zero or more seconds")
            }
        }

        var configs: [WearableConfiguration] = []
        var seen = Set<String>()
        var perKind: [WearableKind: Int] = [:]
        for spec in devices {
            for copy in 0..<max(1, spec.count ?? 1) {
                let index = configs.count
                var own = SeededRandom.derived(from: seed, index: index)
                let addressType = spec.addressType ?? (spec.kind == .heartRateStrap ? "public" : "random")
                guard addressType == "public" || addressType == "random" else {
                    throw ScenarioError.invalid("devices[\(index)]", "addressType must be public or random")
                }
                let generated = DeviceAddress.generated(public: addressType == "public", using: &own)
                let address = try (copy == 0 ? spec.address : nil).map { try DeviceAddress.normalized($0) } ?? generated
                guard seen.insert(address).inserted else {
                    throw ScenarioError.invalid("devices[\(index)]", "duplicate address \(address)")
                }
                let names = adapterConfigs.map(\.name)
                let adapter = spec.adapter ?? spec.heardBy?.first ?? names[index % names.count]
                guard names.contains(adapter) else {
                    throw ScenarioError.invalid("devices[\(index)]", "unknown adapter \(adapter)")
                }
                for name in spec.heardBy ?? [] where !names.contains(name) {
                    throw ScenarioError.invalid("devices[\(index)]", "unknown adapter \(name) in heardBy")
                }
                // Adapters in one box all hear a device in range: each has its own object for it.
                let hearing = spec.heardBy.flatMap { $0.isEmpty ? nil : $0 } ?? names
                guard hearing.contains(adapter) else {
                    throw ScenarioError.invalid("devices[\(index)]", "adapter \(adapter) is not in heardBy")
                }
                let heardBy = [adapter] + hearing.filter { $0 != adapter }.uniqued()
                perKind[spec.kind, default: 0] += 1
                let number = perKind[spec.kind, default: 1]
                let name = spec.name.map { (spec.count ?? 1) > 1 ? "\($0) \(copy + 1)" : $0 }
                    ?? String(format: "%@ %02d", spec.kind.namePrefix, number)
                let faults = (spec.faults ?? FaultSettings()).overriding(self.faults ?? FaultSettings())
                if let uuid = faults.rejectWritesUUID, !uuid.isEmpty, BluetoothUUID(uuid) == nil {
                    throw ScenarioError.invalid("devices[\(index)].faults.rejectWritesUUID", "'\(uuid)' is not a Bluetooth UUID")
                }
                // 0 is success in ATT: a refusal needs a real error code.
                if let code = faults.rejectWritesATTError, !(1...0xff).contains(code) {
                    throw ScenarioError.invalid("devices[\(index)].faults.rejectWritesATTError", "must be 1 to 255")
                }
                let rssi = spec.rssi ?? -45 - Int(own.next() % 40)
                if let passkey = spec.passkey, passkey > 999_999 {
                    throw ScenarioError.invalid("devices[\(index)].passkey", "a passkey has six digits: 0 to 999999")
                }
                var config = (
                    WearableConfiguration(
                        kind: spec.kind, address: address, addressType: addressType, name: name, rssi: rssi,
                        txPower: spec.txPower ?? 4, adapter: adapter, heardBy: heardBy, bonded: spec.bonded ?? false,
                        mtu: UInt16(clamping: max(23, min(517, spec.mtu ?? Int(spec.kind.defaultMTU)))),
                        notifyHz: max(1, min(1000, spec.notifyHz ?? 50)),
                        payloadSize: max(0, min(512, spec.payloadSize ?? 0)), timestamps: spec.timestamps ?? false,
                        inRange: spec.inRange ?? true,
                        faults: faults,
                        seed: own.next()))
                config.pairing = spec.pairing ?? spec.kind.defaultPairing
                config.passkey = spec.passkey ?? config.passkey
                config.requiresEncryption = spec.requiresEncryption ?? spec.kind.isMeasurementDevice
                if let wake = spec.wake {
                    for (field, value) in [("awake", wake.awake), ("asleep", wake.asleep), ("firstWakeAfter", wake.firstWakeAfter)]
                    where !(value >= 0 && value.isFinite) {
                        throw ScenarioError.invalid("devices[\(index)].wake.\(field)", "must be zero or more seconds")
                    }
                    guard spec.kind.isMeasurementDevice else {
                        throw ScenarioError.invalid("devices[\(index)].wake", "only a blood-pressure cuff or a weight scale sleeps and wakes")
                    }
                }
                config.wake = spec.wake
                if let records = spec.records, !(0...100).contains(records) {
                    throw ScenarioError.invalid("devices[\(index)].records", "must be 0 to 100")
                }
                config.records = spec.records ?? config.records
                configs.append(config)
            }
        }
        return (adapterConfigs, configs)
    }
}

extension Array where Element: Hashable {
    /// The elements in order, each once.
    fileprivate func uniqued() -> [Element] {
        var seen = Set<Element>()
        return filter { seen.insert($0).inserted }
    }
}
