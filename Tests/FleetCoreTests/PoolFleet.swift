import FleetCore

/// A random but self-consistent fleet: links never exceed an adapter's slots, at most one attempt
/// is in flight per adapter, and connected devices are reachable where they are connected.
struct PoolFleet: CustomStringConvertible {
    var configuration: PoolConfiguration
    var adapters: [AdapterSnapshot]
    var devices: [PoolDeviceSnapshot]
    var conditions: PoolCentralConditions
    var now: MonotonicInstant

    var description: String {
        "PoolFleet(adapters: \(adapters.count), devices: \(devices.count), max: \(configuration.maxConnections))"
    }

    static func random(seed: UInt64) -> PoolFleet {
        var rng = SeededRandom(seed: seed)
        func chance(_ p: Double) -> Bool { Double.random(in: 0..<1, using: &rng) < p }

        let adapterCount = Int.random(in: 1...4, using: &rng)
        var overrides: [AdapterID: Int] = [:]
        var adapters: [AdapterSnapshot] = []
        for index in 0..<adapterCount {
            let id = PoolFixture.adapter(index)
            overrides[id] = Int.random(in: 0...6, using: &rng)
            adapters.append(AdapterSnapshot(id: id, isPowered: chance(0.85)))
        }
        let configuration = PoolConfiguration(
            maxConnections: Int.random(in: 0...20, using: &rng),
            defaultSlotsPerAdapter: 5,
            slotOverrides: overrides,
            minimumDwell: .seconds(Int64.random(in: 0...120, using: &rng)),
            scoreMargin: Double(Int.random(in: 0...20, using: &rng)),
            attemptRateLimit: AttemptRateLimit(burst: Int.random(in: 1...4, using: &rng), refillInterval: .milliseconds(250))
        )
        let now = PoolFixture.instant(seconds: 120)

        var links: [AdapterID: Int] = [:]
        var attempting: Set<AdapterID> = []
        var devices: [PoolDeviceSnapshot] = []
        for number in 0..<Int.random(in: 0...30, using: &rng) {
            var rssi: [AdapterID: Int] = [:]
            var known: Set<AdapterID> = []
            for adapter in adapters {
                if chance(0.6) { rssi[adapter.id] = Int.random(in: -100 ... -30, using: &rng) }
                if chance(0.1) { known.insert(adapter.id) }
            }
            var link = PoolLinkStatus.disconnected
            let reaching = adapters.filter { rssi[$0.id] != nil || known.contains($0.id) }
            if let adapter = reaching.randomElement(using: &rng)?.id,
               adapters.contains(where: { $0.id == adapter && $0.isPowered }),
               links[adapter, default: 0] < configuration.slots(for: adapter), chance(0.4) {
                if !attempting.contains(adapter), chance(0.2) {
                    link = .attempting(adapter)
                    attempting.insert(adapter)
                } else {
                    link = .connected(adapter, since: PoolFixture.instant(seconds: Int64.random(in: 0...120, using: &rng)))
                }
                links[adapter, default: 0] += 1
            }
            devices.append(PoolDeviceSnapshot(
                id: PoolFixture.device(number),
                membership: chance(0.3) ? .pinned : .pool,
                isEligible: chance(0.9),
                configuredPriority: Int.random(in: 0...5, using: &rng),
                rssi: rssi,
                knownConnectable: known,
                link: link,
                wantsAttempt: link == .disconnected && chance(0.6),
                restoreInProgress: chance(0.05),
                recentFailures: Int.random(in: 0...3, using: &rng)
            ))
        }
        let conditions = PoolCentralConditions(bluetoothdPresent: chance(0.9), engineRunning: chance(0.9))
        return PoolFleet(configuration: configuration, adapters: adapters, devices: devices, conditions: conditions, now: now)
    }

    func isPowered(_ adapter: AdapterID) -> Bool {
        adapters.contains { $0.id == adapter && $0.isPowered }
    }
}
