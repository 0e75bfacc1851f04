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

/// bluetoothd 5.66 stops an adapter's discovery for a `Pair` (`adapter_create_bonding` →
/// `suspend_discovery`) and starts it again `IDLE_DISCOV_TIMEOUT` (5 s) after the bonding
/// (`resume_discovery`), `Discovering` true throughout; a client that stops and starts its
/// discovery makes it scan at once. Seen on the real stack: a scale waking next to a cuff that
/// had just bonded went unheard for those seconds.
@Suite("Discovery stopped for a pairing", .serialized)
struct DiscoveryDuringPairingTests {
    static let cuff = "C0:FF:EE:C0:FF:11"
    static let scale = "C0:FF:EE:5C:A1:12"

    /// A cuff in range (Just Works), a scale out of range.
    static let scenario = Scenario(
        seed: 31, adapters: [AdapterSpec(name: "hci0", slots: 5)],
        devices: [
            DeviceSpec(kind: .heartRateStrap, address: cuff, name: "Cuff", bonded: false),
            DeviceSpec(kind: .heartRateStrap, address: scale, name: "Scale", bonded: false, inRange: false),
        ])

    static func waitForUnreported(_ fixture: SimulatorFixture, _ address: String, count: UInt32) async throws {
        try await withTimeout(.seconds(30), "\(count) advertisements of \(address) left unreported") {
            while try await fixture.counter("AdvertisementsUnreported", address) < count { await Task.yield() }
        }
    }

    @Test func afterAPairingNothingIsReportedUntilTheResumeDelayOrAClientsRestart() async throws {
        // A resume delay longer than the test: only the client's restart can end it.
        var timings = SimulatorTimings.fast
        timings.discoveryResumeDelay = 600
        let fixture = try await SimulatorFixture.start(Self.scenario, timings: timings)
        let adapter: DBusObjectPath = "/org/bluez/hci0"
        let cuffPath = try await fixture.connect(Self.cuff)
        try await fixture.call(cuffPath, "org.bluez.Device1", "Pair")
        #expect(try await fixture.property(cuffPath, "org.bluez.Device1", "Paired") == .boolean(true))
        let scalePath = try #require(await fixture.simulator.devicePath(of: Self.scale))
        try await fixture.control("SetInRange", [.string(Self.scale), .boolean(true)])
        try await Self.waitForUnreported(fixture, Self.scale, count: 5)
        #expect(try await fixture.managedObjects()[scalePath] == nil, "the scale was reported while discovery waited to resume")
        #expect(try await fixture.property(adapter, "org.bluez.Adapter1", "Discovering") == .boolean(true))

        try await fixture.call(adapter, "org.bluez.Adapter1", "StopDiscovery")
        #expect(try await fixture.discover(Self.scale) == scalePath, "a fresh discovery scans at once")
        await fixture.stop()
    }

    @Test func discoveryResumesByItselfAfterTheDelay() async throws {
        var timings = SimulatorTimings.fast
        timings.discoveryResumeDelay = 0.3
        let fixture = try await SimulatorFixture.start(Self.scenario, timings: timings)
        let cuffPath = try await fixture.connect(Self.cuff)
        try await fixture.call(cuffPath, "org.bluez.Device1", "Pair")
        let scalePath = try #require(await fixture.simulator.devicePath(of: Self.scale))
        let added = try await fixture.signals(interface: "org.freedesktop.DBus.ObjectManager", member: "InterfacesAdded")
        try await fixture.control("SetInRange", [.string(Self.scale), .boolean(true)])
        _ = try await added.first(within: .seconds(30), "the scale reported once discovery resumed") {
            (try? $0.body.decode(DBusObjectPath.self, at: 0)) == scalePath
        }
        await fixture.stop()
    }
}
