import BlueZ
import BlueZSimulator
import Fleet
import FleetCore
import GATT
import Testing
import TestSupport

/// Data both ways against the simulated bluetoothd: notifications in on the D-Bus and fd paths,
/// malformed payloads, and writes out with pacing and fairness.
@Suite("The data path against the simulated bluetoothd")
struct FleetDataPathSimulatorTests {
    static func band(_ address: String) -> DeviceSpec {
        DeviceSpec(kind: .motionBand, address: address, addressType: "random", bonded: true, mtu: 247, notifyHz: 20)
    }

    static func bandFleet(_ addresses: [String], fdPath: Bool, seed: UInt64, writes: FleetRuntimeConfiguration.WriteSettings? = nil)
        async throws -> (FleetSimulatorFixture, [DeviceID])
    {
        let scenario = Scenario(seed: seed, adapters: [AdapterSpec(name: "hci0", slots: 5)], devices: addresses.map(band))
        let ids = try addresses.map { try FleetSimulatorFixture.id($0, random: true) }
        var configuration = FleetRuntimeConfiguration(
            pinned: ids.map { FleetRuntimeConfiguration.PinnedDevice(id: $0, className: "band") },
            classes: ["band": FleetSimulatorFixture.bandClass(fdPath: fdPath)], pool: PoolConfiguration(maxConnections: 8))
        if let writes { configuration.writes = ["band": writes] }
        let fleet = try await FleetSimulatorFixture.start(scenario, configuration, seed: seed)
        try await fleet.waitForStatus("every band to be ready") { $0.pinnedReady == ids.count }
        return (fleet, ids)
    }

    @Test func bandStreamsArriveThroughAcquireNotifySockets() async throws {
        let (fleet, ids) = try await Self.bandFleet(["C4:7A:10:00:40:01"], fdPath: true, seed: 41)
        let value = try await fleet.orchestrator.pipeline.values.first(within: .seconds(10), "a band sample") {
            $0.characteristic == FleetSimulatorFixture.bandData
        }
        #expect(value.device == ids[0])
        // The notification came over the socket: BlueZ reports the characteristic as acquired.
        let tree = await fleet.client.tree
        let device = try #require(tree.devices(address: "C4:7A:10:00:40:01").first)
        let data = try #require(tree.characteristics(of: device.path).first { $0.uuid == FleetSimulatorFixture.bandData })
        #expect(data.notifyAcquired == true, "the stream was acquired as a socket, not started with StartNotify")
        await fleet.stop()
    }

    @Test func malformedNotificationsAreCountedAndTheDeviceStaysReady() async throws {
        let address = "AA:BB:CC:00:40:02"
        let scenario = Scenario(
            seed: 42, adapters: [AdapterSpec(name: "hci0", slots: 5)],
            devices: [DeviceSpec(kind: .heartRateStrap, address: address, addressType: "public", bonded: true)])
        let id = try FleetSimulatorFixture.id(address)
        let configuration = FleetRuntimeConfiguration(
            pinned: [FleetRuntimeConfiguration.PinnedDevice(id: id, className: "strap")],
            classes: ["strap": FleetSimulatorFixture.strapClass()], pool: PoolConfiguration(maxConnections: 4))
        let fleet = try await FleetSimulatorFixture.start(scenario, configuration, seed: 42)
        try await fleet.waitForStatus("the strap to be ready") { $0.pinnedReady == 1 }
        let values = fleet.orchestrator.pipeline.values
        let before = fleet.orchestrator.pipeline.counters(for: id).decodeErrors

        // Empty, and a 16-bit heart rate cut short: both malformed.
        #expect(await fleet.simulator.injectNotification(address: address, characteristic: .heartRateMeasurement, bytes: []))
        #expect(await fleet.simulator.injectNotification(address: address, characteristic: .heartRateMeasurement, bytes: [0x01, 0x48]))
        let failures = try await withTimeout(.seconds(10), "two decode failures") {
            var count = 0
            for await value in values where value.device == id {
                if case .failure = value.result { count += 1 }
                if count == 2 { return count }
            }
            return count
        }
        #expect(failures == 2)
        #expect(fleet.orchestrator.pipeline.counters(for: id).decodeErrors == before + 2)
        // Still ready, and good values still decode.
        let good = try await values.first(within: .seconds(10), "a valid heart rate after the bad ones") {
            if case .success(.heartRateMeasurement) = $0.result { return $0.device == id }
            return false
        }
        #expect(good.device == id)
        #expect(await fleet.state(address) == .ready)
        await fleet.stop()
    }

    @Test func writesWithoutResponseArePacedFairAndBounded() async throws {
        let addresses = ["C4:7A:10:00:41:01", "C4:7A:10:00:41:02", "C4:7A:10:00:41:03", "C4:7A:10:00:41:04"]
        let depth = 16
        let settings = FleetRuntimeConfiguration.WriteSettings(
            options: OutgoingDeviceOptions(queueCapacities: [.control: 4, .normal: depth, .bulk: depth]), defaultQoS: .normal)
        let (fleet, ids) = try await Self.bandFleet(addresses, fdPath: false, seed: 43, writes: settings)
        await fleet.simulator.resetCounters()

        // Offer each device more than its queue holds, round robin: the excess is refused, never
        // queued beyond the bound.
        var accepted: [DeviceID: Int] = [:]
        var refused = 0
        for round in 0..<(depth * 3) {
            for id in ids {
                do {
                    try await fleet.orchestrator.write(
                        id, characteristic: FleetSimulatorFixture.bandControl, bytes: [0x10, UInt8(round)], qos: .normal)
                    accepted[id, default: 0] += 1
                } catch {
                    guard case .queueFull(_, .normal, let queued) = error else { throw error }
                    #expect(queued == depth)
                    refused += 1
                }
            }
        }
        for id in ids {
            let status = await fleet.orchestrator.writeStatus(id)
            #expect((status.queueDepths[.normal] ?? 0) <= depth)
            #expect((status.counters.highWater["normal"] ?? 0) <= depth)
        }
        let total = accepted.values.reduce(0, +)
        #expect(total >= ids.count * depth, "every device queued at least its bound")

        // Everything accepted arrives; at the halfway mark no device has been left behind.
        let simulator = fleet.simulator
        let halfway = try await withTimeout(.seconds(20), "half the writes to arrive") {
            while true {
                let counters = await simulator.counterSnapshot()
                if counters.totalWritesReceived >= total / 2 { return counters }
                await Task.yield()
            }
        }
        let shares = addresses.map { halfway.writesReceived[$0, default: 0] }
        #expect((shares.min() ?? 0) > 0, "no device starved at the halfway mark: \(shares)")
        let orchestrator = fleet.orchestrator
        let final = try await withTimeout(.seconds(30), "every accepted write to arrive and be accounted for") {
            while true {
                let counters = await simulator.counterSnapshot()
                var sent = 0
                for id in ids { sent += await orchestrator.writeStatus(id).counters.sentWithoutResponse }
                if counters.totalWritesReceived >= total, sent >= total { return counters }
                await Task.yield()
            }
        }
        for (index, id) in ids.enumerated() {
            #expect(final.writesReceived[addresses[index], default: 0] == accepted[id, default: 0])
            let status = await fleet.orchestrator.writeStatus(id)
            #expect(status.counters.sentWithoutResponse == accepted[id, default: 0])
            #expect(status.counters.failed == 0)
        }
        await fleet.stop()
    }

    @Test func onTheFdPathWritesWithoutResponseGoThroughAnAcquireWriteSocket() async throws {
        let address = "C4:7A:10:00:42:01"
        let (fleet, ids) = try await Self.bandFleet([address], fdPath: true, seed: 44)
        await fleet.simulator.resetCounters()
        for index in 0..<20 {
            try await fleet.orchestrator.write(ids[0], characteristic: FleetSimulatorFixture.bandControl, bytes: [0x20, UInt8(index)])
        }
        let orchestrator = fleet.orchestrator
        let simulator = fleet.simulator
        let counters = try await withTimeout(.seconds(20), "20 writes to arrive over the socket") {
            while true {
                let status = await orchestrator.writeStatus(ids[0]).counters
                if status.sentWithoutResponse >= 20, await simulator.counterSnapshot().writesReceived[address, default: 0] >= 20 {
                    return status
                }
                await Task.yield()
            }
        }
        #expect(counters.sentOnSocket == 20)
        #expect(counters.failed == 0)
        let tree = await fleet.client.tree
        let device = try #require(tree.devices(address: address).first)
        let control = try #require(tree.characteristics(of: device.path).first { $0.uuid == FleetSimulatorFixture.bandControl })
        #expect(control.writeAcquired == true)
        await fleet.stop()
    }
}
