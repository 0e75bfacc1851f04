import BlueZSimulator
import DBus
import Testing
import TestSupport

@Suite("Passers-by", .serialized)
struct PassersByTests {
    /// Five distinct passers-by come while discovering, each an object of its own with a random
    /// static address, and every one is gone again (InterfacesRemoved, then forgotten by the
    /// simulator) once it left and its TemporaryTimeout ran out.
    @Test("passers-by appear while discovering, expire after they leave, and are forgotten")
    func passersByComeAndGo() async throws {
        var scenario = Scenario.trio
        // In range for 5 s each: long enough to be heard however late discovery starts on a busy
        // machine (an object appears only when discovery hears it, after the test subscribed).
        scenario.passersBy = PassersBy(count: 5, perSecond: 20, dwell: 5, startAfter: 1)
        let fixture = try await SimulatorFixture.start(scenario)
        let added = try await fixture.signals(interface: "org.freedesktop.DBus.ObjectManager", member: "InterfacesAdded")
        let removed = try await fixture.signals(interface: "org.freedesktop.DBus.ObjectManager", member: "InterfacesRemoved")
        try await fixture.call("/org/bluez/hci0", "org.bluez.Adapter1", "StartDiscovery")
        let passerPaths = (0..<5).map { "/org/bluez/hci0/dev_C5_00_00_00_00_0\($0)" }

        let appeared = try await withTimeout(.seconds(30), "five passers-by heard") {
            var appeared: [String: [String: DBusValue]] = [:]
            for try await message in added {
                let path = try message.body.decode(DBusObjectPath.self, at: 0).rawValue
                guard passerPaths.contains(path) else { continue }
                let interfaces = try message.body.decode([String: [String: DBusValue]].self, at: 1)
                appeared[path] = interfaces["org.bluez.Device1"]
                if appeared.count == 5 { return appeared }
            }
            return appeared
        }
        #expect(appeared.count == 5)
        for (path, device) in appeared {
            #expect(device["AddressType"] == .string("random"), "\(path)")
            #expect(device["Paired"] == .boolean(false), "\(path)")
        }
        let gone = try await withTimeout(.seconds(30), "five passers-by expired") {
            var gone: Set<String> = []
            for try await message in removed {
                let path = try message.body.decode(DBusObjectPath.self, at: 0).rawValue
                if passerPaths.contains(path) { gone.insert(path) }
                if gone.count == 5 { return gone }
            }
            return gone
        }
        #expect(gone.count == 5)
        try await withTimeout(.seconds(30), "the simulator to forget them") {
            while case .uint64(let count)? = try await fixture.counters()["PassersByGone"], count < 5 { await Task.yield() }
        }
        #expect(try await fixture.counters()["PassersByArrived"] == .uint64(5))
        #expect(try await fixture.managedObjects().keys.filter { $0.rawValue.contains("dev_C5") }.isEmpty)
        await fixture.stop()
    }

    @Test("a passers-by rate that is not positive is refused with where it is")
    func badRateIsRefused() throws {
        var scenario = Scenario.trio
        scenario.passersBy = PassersBy(count: 5, perSecond: 0, dwell: 1)
        let error = #expect(throws: ScenarioError.self) { try scenario.resolved() }
        #expect(error?.description == "passersBy.perSecond: must be a positive number")
    }
}
