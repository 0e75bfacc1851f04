import DeterministicRandom

/// The gateways of one simulated world, each of them one bluez-sim instance (a gateway's
/// bluetoothd on a bus of its own) that shares the world's wearables with the others.
///
/// A scenario's `world` section. The world's wearables are the scenario's `devices`: a device's
/// `heardByGateways` names the gateways that hear it, with the RSSI each hears it at (absent:
/// every gateway, at its `rssi`). Every instance reads the same scenario, so every instance
/// resolves the same addresses; each simulates only the devices its gateway hears.
public struct WorldSpec: Codable, Sendable, Hashable {
    public var gateways: [WorldGatewaySpec]

    public init(gateways: [WorldGatewaySpec]) {
        self.gateways = gateways
    }
}

/// One gateway of a `WorldSpec`.
public struct WorldGatewaySpec: Codable, Sendable, Hashable {
    /// Letters, digits, `-` and `_` (at most 64): it names the gateway's lock file in the world
    /// directory.
    public var id: String
    /// This gateway's own adapters; absent: the scenario's `adapters`. Their addresses are drawn
    /// per gateway unless given, so no two gateways share a controller address.
    public var adapters: [AdapterSpec]?

    public init(id: String, adapters: [AdapterSpec]? = nil) {
        self.id = id
        self.adapters = adapters
    }
}

extension WorldSpec {
    /// Whether `id` may name a gateway (and so a file in the world directory).
    static func isValidGatewayID(_ id: String) -> Bool {
        (1...64).contains(id.utf8.count)
            && id.utf8.allSatisfy { byte in
                (UInt8(ascii: "a")...UInt8(ascii: "z")).contains(byte) || (UInt8(ascii: "A")...UInt8(ascii: "Z")).contains(byte)
                    || (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(byte) || byte == UInt8(ascii: "-") || byte == UInt8(ascii: "_")
            }
    }
}

/// The concrete fleet of one gateway of a world: what `BlueZSimulator` runs, and who hears whom
/// in the whole world (to check a run-time RSSI change).
struct ResolvedWorldGateway {
    var adapters: [AdapterConfiguration]
    /// Only the devices this gateway hears, each with its RSSI here.
    var devices: [WearableConfiguration]
    /// Every world device's address → the gateways that hear it → the RSSI given for it there.
    var hearing: [String: [String: Int]]
}

extension Scenario {
    /// Gateway `gateway`'s adapters and the devices it hears, from the scenario's `world`.
    /// Throws `ScenarioError` when there is no world, the gateway is not in it, or the world is
    /// inconsistent (bad or duplicate ids, an unknown gateway in a `heardByGateways`).
    func resolved(forGateway gateway: String) throws -> ResolvedWorldGateway {
        guard let world else { throw ScenarioError.invalid("world", "the scenario describes no world of gateways") }
        guard !world.gateways.isEmpty else { throw ScenarioError.invalid("world.gateways", "no gateway") }
        var ids = Set<String>()
        for (index, spec) in world.gateways.enumerated() {
            guard WorldSpec.isValidGatewayID(spec.id) else {
                throw ScenarioError.invalid("world.gateways[\(index)].id", "'\(spec.id)' is not 1 to 64 letters, digits, - or _")
            }
            guard ids.insert(spec.id).inserted else {
                throw ScenarioError.invalid("world.gateways[\(index)].id", "duplicate gateway \(spec.id)")
            }
        }
        guard let gatewayIndex = world.gateways.firstIndex(where: { $0.id == gateway }) else {
            throw ScenarioError.invalid("world.gateways", "no gateway \(gateway)")
        }
        for (index, spec) in devices.enumerated() {
            for (id, rssi) in spec.heardByGateways ?? [:] {
                guard ids.contains(id) else {
                    throw ScenarioError.invalid("devices[\(index)].heardByGateways", "unknown gateway \(id)")
                }
                guard (-127...20).contains(rssi) else {
                    throw ScenarioError.invalid("devices[\(index)].heardByGateways.\(id)", "RSSI must be -127 to 20 dBm")
                }
            }
        }

        // Every world device is resolved, heard here or not: its place in the list draws its
        // address and its random stream, which must be the same in every gateway's instance. One
        // this gateway does not hear names none of its adapters.
        var own = self
        own.adapters = world.gateways[gatewayIndex].adapters ?? adapters
        own.devices = devices.map { spec in
            guard spec.heardByGateways.map({ $0[gateway] == nil }) ?? false else { return spec }
            var unheard = spec
            unheard.adapter = nil
            unheard.heardBy = nil
            return unheard
        }
        var (adapterConfigs, deviceConfigs) = try own.resolved()
        let adapterSpecs = own.adapters ?? [AdapterSpec(name: "hci0")]
        var adapterRandom = SeededRandom.derived(from: (seed ?? 1) ^ 0x6A7E_3A1D, index: gatewayIndex)
        for index in adapterConfigs.indices where adapterSpecs[index].address == nil {
            adapterConfigs[index].address = DeviceAddress.generated(public: true, using: &adapterRandom)
        }

        // The same expansion as `resolved()`: a spec with `count` stands for that many devices.
        let gatewayRSSI = devices.flatMap { spec in Array(repeating: spec.heardByGateways, count: max(1, spec.count ?? 1)) }
        var hearing: [String: [String: Int]] = [:]
        var heardHere: [WearableConfiguration] = []
        for (config, byGateway) in zip(deviceConfigs, gatewayRSSI) {
            let heardBy = byGateway ?? Dictionary(uniqueKeysWithValues: world.gateways.map { ($0.id, config.rssi) })
            hearing[config.address] = heardBy
            guard let rssi = heardBy[gateway] else { continue }
            var heard = config
            heard.rssi = rssi
            heardHere.append(heard)
        }
        deviceConfigs = heardHere
        return ResolvedWorldGateway(adapters: adapterConfigs, devices: deviceConfigs, hearing: hearing)
    }
}
