import DBus
import Fleet
import FleetControl
import Foundation
import Logging
import Testing
import TestSupport

/// The built `wearfleetctl`, run as a user runs it, against an exported interface with a fixed
/// fleet on a private bus.
@Suite("wearfleetctl against a private bus")
struct WearfleetctlCommandTests {
    let bus: PrivateBus
    let endpoint: ControlEndpoint

    init() async throws {
        bus = try PrivateBus()
        endpoint = try await ControlEndpoint.start(
            bus: .address(bus.address), version: "9.8.7", logger: ControlEndpointTests.quiet) { SampleFleet.status }
    }

    func ctl(_ arguments: String...) async throws -> Commands.Result {
        try await Commands.run(Commands.wearfleetctl, arguments)
    }

    @Test func statusPrintsTheTableAndExitsZero() async throws {
        let result = try await ctl("status", "--bus", bus.address)
        #expect(result.status == 0)
        var expected = StatusTableTests.sample
        expected.version = "9.8.7"
        #expect(result.output == StatusTable.render(expected).joined(separator: "\n"))
        #expect(result.errors.isEmpty)
    }

    @Test func statusIsTheDefaultSubcommand() async throws {
        let result = try await ctl("--bus", bus.address)
        #expect(result.status == 0)
        #expect(result.output.hasPrefix("wearfleetd 9.8.7: 1/2 pinned ready"))
    }

    @Test func statusJSONParsesAndCarriesTheDevices() async throws {
        let result = try await ctl("status", "--json", "--bus", bus.address)
        #expect(result.status == 0)
        let json = try #require(try JSONSerialization.jsonObject(with: Data(result.output.utf8)) as? [String: Any])
        #expect(json["schemaVersion"] as? Int == ControlJSON.schemaVersion)
        #expect(json["version"] as? String == "9.8.7")
        let devices = try #require(json["devices"] as? [[String: Any]])
        #expect(devices.compactMap { $0["address"] as? String } == ["AA:BB:CC:00:00:01", "AA:BB:CC:00:00:02", "AA:BB:CC:00:00:03"])
    }

    @Test func deviceShowsOneDevicesDetails() async throws {
        let result = try await ctl("device", "aa:bb:cc:00:00:01", "--bus", bus.address)
        #expect(result.status == 0)
        #expect(result.output.split(separator: "\n").first == "Address:       AA:BB:CC:00:00:01")
        #expect(result.output.contains("Name:          strap-1"))
        let json = try await ctl("device", "AA:BB:CC:00:00:01", "--json", "--bus", bus.address)
        let object = try #require(try JSONSerialization.jsonObject(with: Data(json.output.utf8)) as? [String: Any])
        #expect(object["lastValue"] as? String == "72 bpm, RR 812 ms")
    }

    @Test func anUnknownDeviceExitsFour() async throws {
        let result = try await ctl("device", "AA:BB:CC:00:00:99", "--bus", bus.address)
        #expect(result.status == 4)
        #expect(result.output.isEmpty)
        #expect(result.errors == "wearfleetctl: no such device: AA:BB:CC:00:00:99 is not in the fleet")
    }

    @Test func anInvalidAddressIsAUsageError() async throws {
        let result = try await ctl("device", "strap-1", "--bus", bus.address)
        #expect(result.status == 2)
        #expect(result.errors == "wearfleetctl: invalid address 'strap-1': expected AA:BB:CC:DD:EE:FF")
    }

    @Test func badUsageExitsTwo() async throws {
        let unknown = try await ctl("status", "--no-such-flag")
        #expect(unknown.status == 2)
        #expect(unknown.errors.contains("--no-such-flag"))
        let missing = try await ctl("device")
        #expect(missing.status == 2)
    }

    @Test func aBusWithoutTheDaemonExitsOneAndSaysSo() async throws {
        let empty = try PrivateBus()
        let result = try await ctl("status", "--bus", empty.address)
        #expect(result.status == 1)
        #expect(result.errors == "wearfleetctl: wearfleetd is not running on \(empty.address) (nothing owns org.wearfleet.Daemon)")
        let device = try await ctl("device", "AA:BB:CC:00:00:01", "--bus", empty.address)
        #expect(device.status == 1)
    }

    @Test func anUnreachableBusExitsOne() async throws {
        let result = try await ctl("status", "--bus", "unix:path=/nonexistent/bus.socket")
        #expect(result.status == 1)
        #expect(result.errors.hasPrefix("wearfleetctl: cannot connect to "))
        #expect(result.errors.contains("/nonexistent/bus.socket"))
    }

    @Test func busctlIntrospectsTheInterfaceAndReadsTheSummary() async throws {
        let introspection = try await Commands.run(
            "/usr/bin/busctl", ["--address=\(bus.address)", "introspect", WearfleetControl.busName, WearfleetControl.objectPath.rawValue])
        #expect(introspection.status == 0)
        for member in [".GetStatus", ".ListDevices", ".GetDevice", ".Summary", ".Version"] {
            #expect(introspection.output.contains(member), "busctl lists \(member)")
        }
        let summary = try await Commands.run(
            "/usr/bin/busctl",
            ["--address=\(bus.address)", "get-property", WearfleetControl.busName, WearfleetControl.objectPath.rawValue,
             WearfleetControl.interfaceName, "Summary"])
        #expect(summary.output == "s \"1/2 pinned ready, 0 pool, hci0 1/7 slots, hci1 off\"")
        let unknown = try await Commands.run(
            "/usr/bin/busctl",
            ["--address=\(bus.address)", "call", WearfleetControl.busName, WearfleetControl.objectPath.rawValue,
             WearfleetControl.interfaceName, "GetDevice", "s", "AA:BB:CC:00:00:99"])
        #expect(unknown.status != 0)
        #expect(unknown.errors.contains("not in the fleet"))
    }
}
