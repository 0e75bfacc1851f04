import DeterministicRandom
import Foundation

// Passers-by: wearables that arrive, advertise for a while and leave for good (`PassersBy`).

extension BlueZSimulator {
    /// Brings the scenario's passers-by in and out on simulated time: arrivals evenly spaced,
    /// each leaving `dwell` after it came. A leaver stops advertising (a link it had drops,
    /// reason Timeout); its objects then expire like any temporary device's, and once none is
    /// left and it has no link it is forgotten here too (`reapPassersBy`).
    func streamPassersBy(_ spec: PassersBy) async {
        let start = ContinuousClock.now + timings.duration(max(0, spec.startAfter ?? 0))
        var next = 0
        // Departures come in arrival order: every passer-by stays as long.
        var leaving: [(address: String, at: ContinuousClock.Instant)] = []
        var firstLeaving = 0
        while !Task.isCancelled, next < spec.count || firstLeaving < leaving.count {
            let arrival = next < spec.count ? start + timings.duration(Double(next) / spec.perSecond) : nil
            let departure = firstLeaving < leaving.count ? leaving[firstLeaving].at : nil
            guard let due = [arrival, departure].compactMap({ $0 }).min() else { return }
            try? await Task.sleep(until: due, clock: .continuous)
            let now = ContinuousClock.now
            while firstLeaving < leaving.count, leaving[firstLeaving].at <= now {
                await depart(leaving[firstLeaving].address)
                firstLeaving += 1
            }
            if firstLeaving > 1024 {
                leaving.removeFirst(firstLeaving)
                firstLeaving = 0
            }
            if let arrival, arrival <= now {
                if let address = arrive(next, spec) {
                    leaving.append((address, now + timings.duration(spec.dwell)))
                }
                next += 1
            }
        }
    }

    /// The `index`th passer-by comes into range of every adapter, strongest on one of them
    /// (round-robin); discovery hears it from now on.
    private func arrive(_ index: Int, _ spec: PassersBy) -> String? {
        let kind = spec.kind ?? .heartRateStrap
        guard !adapterNames.isEmpty,
            let address = (0...UInt8.max).lazy.map({ PassersBy.address(index, variant: $0) }).first(where: { self.devices[$0] == nil })
        else { return nil }
        var random = SeededRandom.derived(from: passersBySeed, index: index)
        let adapter = adapterNames[index % adapterNames.count]
        let configuration = WearableConfiguration(
            kind: kind, address: address, addressType: "random", name: "Passer-by \(index + 1)",
            rssi: -55 - Int(random.next() % 30), txPower: 4, adapter: adapter,
            heardBy: [adapter] + adapterNames.filter { $0 != adapter }, bonded: false, mtu: kind.defaultMTU, notifyHz: 50,
            payloadSize: 0, timestamps: false, inRange: true, faults: fleetFaults, seed: random.next())
        guard let device = try? SimulatedDevice(configuration: configuration, adapterPaths: adapters.mapValues(\.path), timings: timings)
        else { return nil }
        devices[address] = device
        passerByAddresses.append(address)
        counters.passersByArrived += 1
        return address
    }

    /// Out of range for good: no more advertisements, and a link it had is lost.
    private func depart(_ address: String) async {
        devices[address]?.inRange = false
        await dropLink(address, reason: .timeout, announce: true)
    }

    /// Forgets the passers-by that left and have no object and no link left: bluetoothd has
    /// nothing of them any more. One that was connected is kept (bluetoothd keeps a device it
    /// connected to until it is removed), as it would be.
    func reapPassersBy() {
        let gone = passerByAddresses.filter { address in
            guard let device = devices[address] else { return true }
            return !device.inRange && device.link == .disconnected && !device.objects.values.contains(where: \.exported)
        }
        guard !gone.isEmpty else { return }
        let goneSet = Set(gone)
        for address in gone { devices[address] = nil }
        passerByAddresses.removeAll { goneSet.contains($0) }
        counters.passersByGone += gone.count
    }
}
