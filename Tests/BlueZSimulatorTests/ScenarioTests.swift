import BlueZSimulator
import Foundation
import Testing

@Suite("Scenarios")
struct ScenarioTests {
    @Test("the same seed resolves to the same fleet")
    func deterministic() throws {
        let first = try Scenario.quick(devices: 12, seed: 42).resolved()
        let second = try Scenario.quick(devices: 12, seed: 42).resolved()
        #expect(first.devices == second.devices)
        #expect(first.adapters == second.adapters)
    }

    @Test("another seed gives other addresses")
    func seedMatters() throws {
        let first = try Scenario.quick(devices: 6, seed: 1).resolved().devices.map(\.address)
        let second = try Scenario.quick(devices: 6, seed: 2).resolved().devices.map(\.address)
        #expect(first != second)
    }

    @Test("--devices cycles strap, watch, motion band and spreads them over the adapters")
    func quickFleet() throws {
        let fleet = try Scenario.quick(devices: 6, adapters: 2, slots: 3).resolved()
        #expect(fleet.devices.map(\.kind) == [.heartRateStrap, .watch, .motionBand, .heartRateStrap, .watch, .motionBand])
        #expect(fleet.devices.map(\.adapter) == ["hci0", "hci1", "hci0", "hci1", "hci0", "hci1"])
        #expect(fleet.adapters.allSatisfy { $0.slots == 3 })
        // Random static addresses have their two top bits set.
        for device in fleet.devices where device.addressType == "random" {
            let first = try #require(UInt8(device.address.prefix(2), radix: 16))
            #expect(first & 0xC0 == 0xC0)
        }
    }

    @Test("a JSON scenario decodes devices, counts, faults, timings and schedule")
    func json() throws {
        let text = """
            {
              "seed": 3,
              "timings": { "connectLatency": 0.05 },
              "adapters": [ { "name": "hci0", "slots": 7 }, { "name": "hci1", "slots": 5 } ],
              "devices": [
                { "kind": "heart-rate-strap", "count": 3, "adapter": "hci1", "faults": { "linkLossMeanSeconds": 600 } },
                { "kind": "motion-band", "address": "c0:11:22:33:44:55", "notifyHz": 200, "mtu": 247 }
              ],
              "faults": { "connectFailure": "le-connection-abort-by-local", "connectFailureProbability": 0.1 },
              "schedule": [ { "at": 30, "fault": { "kind": "restart", "seconds": 2 } } ]
            }
            """
        let scenario = try JSONDecoder().decode(Scenario.self, from: Data(text.utf8))
        #expect(scenario.timings?.connectLatency == 0.05)
        #expect(scenario.timings?.resolveDelay == SimulatorTimings().resolveDelay)
        let fleet = try scenario.resolved()
        #expect(fleet.devices.count == 4)
        #expect(fleet.devices[0].faults.linkLossMeanSeconds == 600)
        #expect(fleet.devices[0].faults.connectFailureProbability == 0.1)
        #expect(fleet.devices[3].address == "C0:11:22:33:44:55")
        #expect(scenario.schedule?.first?.fault.kind == .restart)
    }

    @Test("duplicate addresses are rejected")
    func duplicates() {
        let scenario = Scenario(devices: [
            DeviceSpec(kind: .watch, address: "C0:00:00:00:00:01"), DeviceSpec(kind: .watch, address: "c0:00:00:00:00:01"),
        ])
        #expect(throws: ScenarioError.self) { try scenario.resolved() }
    }
}

@Suite("Shipped scenarios")
struct ShippedScenarioTests {
    @Test("scenarios/gateway-ward.json loads and resolves")
    func gatewayWard() throws {
        let url = FidelityEnvironment.packageRoot.appendingPathComponent("scenarios/gateway-ward.json")
        let fleet = try Scenario.load(from: url).resolved()
        #expect(fleet.adapters.map(\.slots) == [5, 7])
        #expect(fleet.devices.count == 9)
        #expect(fleet.devices.filter { $0.adapter == "hci1" }.count >= 3)
    }
}
