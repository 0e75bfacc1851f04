import BlueZSimulator
import DBus
import Foundation
import TestSupport

extension SimulatorFixture {
    /// A private bus with gateway `gateway` of `world`'s instance on it.
    static func start(
        _ scenario: Scenario, gateway: String, of world: SharedWorld, timings: SimulatorTimings = .fast
    ) async throws -> SimulatorFixture {
        let bus = try PrivateBus()
        let simulator = try BlueZSimulator(
            scenario: scenario, bus: .address(bus.address), timings: timings, worldGateway: WorldGateway(id: gateway, world: world))
        try await simulator.start()
        let client = try await DBusConnection.connect(to: .address(bus.address), threadName: "test-client-\(gateway)")
        return SimulatorFixture(bus: bus, simulator: simulator, client: client)
    }

    /// This instance's `GetWorld` entry for the device.
    func worldEntry(_ address: String) async throws -> [String: DBusValue] {
        let devices = try await control("GetWorld").decode([String: [String: DBusValue]].self, at: 0)
        return devices[address] ?? [:]
    }
}

/// A world directory of a test's own, removed by `remove()`.
struct WorldDirectory {
    let world: SharedWorld

    init() throws {
        world = try SharedWorld(
            directory: FileManager.default.temporaryDirectory.appendingPathComponent("wearfleet-world-\(UUID().uuidString)"))
    }

    func remove() {
        try? FileManager.default.removeItem(at: world.directory)
    }
}

extension Scenario {
    /// Two gateways: `sharedStrap` heard by both (gw1 strongly), `gw1OnlyStrap` by gw1 alone,
    /// `bondedWatch` by both, bonded to both (known at start: connectable without discovery).
    static var twoGatewayWorld: Scenario {
        Scenario(
            seed: 11, adapters: [AdapterSpec(name: "hci0", slots: 5)],
            devices: [
                DeviceSpec(kind: .heartRateStrap, address: sharedStrap, heardByGateways: ["gw1": -50, "gw2": -70]),
                DeviceSpec(kind: .heartRateStrap, address: gw1OnlyStrap, heardByGateways: ["gw1": -60]),
                DeviceSpec(kind: .watch, address: bondedWatch, bonded: true),
            ],
            world: WorldSpec(gateways: [WorldGatewaySpec(id: "gw1"), WorldGatewaySpec(id: "gw2")]))
    }
}

let sharedStrap = "00:1A:7D:00:00:11"
let gw1OnlyStrap = "00:1A:7D:00:00:12"
let bondedWatch = "C0:00:00:00:00:13"
