import BlueZSimulator
import DBus
import Foundation
import Testing
import TestSupport

/// `stall-discovery`: the scan Linux 6.1 paused for an LE connection attempt and never resumed,
/// while bluetoothd 5.66 kept `Discovering` true (NOTES.md, "The real stack").
@Suite("A stalled discovery (stall-discovery)", .serialized)
struct DiscoveryStallTests {
    /// One unbonded strap on hci0, out of range: bluetoothd has no object for it yet.
    static var absentStrap: Scenario {
        Scenario(
            seed: 7, adapters: [AdapterSpec(name: "hci0", slots: 5)],
            devices: [DeviceSpec(kind: .heartRateStrap, address: strap, bonded: false, inRange: false)])
    }

    /// Waits until the stalled scan has left `count` more of the strap's advertisements
    /// unreported than `before`: the simulator's own clock for "it had every chance to report".
    static func waitForUnreported(_ fixture: SimulatorFixture, beyond before: UInt32, count: UInt32) async throws -> UInt32 {
        try await withTimeout(.seconds(30), "\(count) advertisements left unreported") {
            while true {
                let unreported = try await fixture.counter("AdvertisementsUnreported", strap)
                if unreported >= before + count { return unreported }
                await Task.yield()
            }
        }
    }

    @Test("nothing is reported while Discovering stays true, until every client has stopped and one starts again")
    func stalledUntilEveryClientRestarts() async throws {
        let fixture = try await SimulatorFixture.start(Self.absentStrap)
        let path = try #require(await fixture.simulator.devicePath(of: strap))
        let adapter: DBusObjectPath = "/org/bluez/hci0"
        // A second client discovering too: one client's StopDiscovery does not end the kernel's scan.
        let other = try await DBusConnection.connect(to: .address(fixture.bus.address), threadName: "other-client")
        try await other.call(destination: "org.bluez", path: adapter, interface: "org.bluez.Adapter1", member: "StartDiscovery", [])
        try await fixture.call(adapter, "org.bluez.Adapter1", "StartDiscovery")
        try await fixture.control("StallDiscovery", [.string("hci0")])
        try await fixture.control("SetInRange", [.string(strap), .boolean(true)])
        // bluetoothd takes a filter and restarts nothing.
        try await fixture.call(
            adapter, "org.bluez.Adapter1", "SetDiscoveryFilter", [.stringVariantMap(["Transport": .string("le")])])
        var unreported = try await Self.waitForUnreported(fixture, beyond: 0, count: 5)
        #expect(try await fixture.managedObjects()[path] == nil, "the strap was reported by a stalled scan")
        #expect(try await fixture.property(adapter, "org.bluez.Adapter1", "Discovering") == .boolean(true))

        try await fixture.call(adapter, "org.bluez.Adapter1", "StopDiscovery")
        try await fixture.call(adapter, "org.bluez.Adapter1", "StartDiscovery")
        unreported = try await Self.waitForUnreported(fixture, beyond: unreported, count: 5)
        #expect(try await fixture.managedObjects()[path] == nil, "one client's restart ended the stall while another discovered")

        try await other.call(destination: "org.bluez", path: adapter, interface: "org.bluez.Adapter1", member: "StopDiscovery", [])
        try await fixture.call(adapter, "org.bluez.Adapter1", "StopDiscovery")
        #expect(try await fixture.property(adapter, "org.bluez.Adapter1", "Discovering") == .boolean(false))
        // A fresh discovery hears the strap again.
        #expect(try await fixture.discover(strap) == path)
        await other.close()
        await fixture.stop()
    }

    @Test("applied while nothing discovers, the next discovery starts stalled; a fleet-wide ClearFaults lets it hear")
    func stallOfTheNextDiscoveryAndClear() async throws {
        var scenario = Self.absentStrap
        scenario.devices[0].inRange = true
        let fixture = try await SimulatorFixture.start(scenario)
        let path = try #require(await fixture.simulator.devicePath(of: strap))
        try await fixture.control("StallDiscovery", [.string("")])
        try await fixture.call("/org/bluez/hci0", "org.bluez.Adapter1", "StartDiscovery")
        _ = try await Self.waitForUnreported(fixture, beyond: 0, count: 5)
        #expect(try await fixture.managedObjects()[path] == nil)
        try await fixture.control("ClearFaults", [.string("")])
        #expect(try await fixture.discover(strap) == path)
        await fixture.stop()
    }

    @Test("StallDiscovery on an unknown adapter fails InvalidArgs")
    func unknownAdapter() async throws {
        let fixture = try await SimulatorFixture.start(Self.absentStrap)
        _ = try await expectError(DBusError.invalidArgs) { try await fixture.control("StallDiscovery", [.string("hci9")]) }
        await fixture.stop()
    }
}
