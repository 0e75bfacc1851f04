import DBus
import Fleet
import FleetControl
import FleetCore
import Logging
import Testing
import TestSupport

/// The interface exported by `ControlEndpoint` on a private bus, read with the DBus library.
@Suite("org.wearfleet.Daemon1 on a private bus")
struct ControlEndpointTests {
    static let quiet = Logger(label: "control-test") { _ in SwiftLogNoOpLogHandler() }

    let bus: PrivateBus
    let box = StatusBox(SampleFleet.status)
    let endpoint: ControlEndpoint
    let client: DBusConnection

    init() async throws {
        bus = try PrivateBus()
        let box = self.box
        endpoint = try await ControlEndpoint.start(
            bus: .address(bus.address), version: "9.8.7", refreshInterval: .milliseconds(50), logger: Self.quiet
        ) { box.get() }
        client = try await DBusConnection.connect(to: .address(bus.address), threadName: "control-client")
    }

    func call(_ member: String, _ arguments: [DBusValue] = []) async throws -> [DBusValue] {
        try await client.call(
            destination: WearfleetControl.busName, path: WearfleetControl.objectPath, interface: WearfleetControl.interfaceName,
            member: member, arguments, timeout: .seconds(10))
    }

    @Test func getStatusAnswersTheFleetsCountsSummaryAndAdapters() async throws {
        let reply = try await call("GetStatus")
        try reply.expectSignature("a{sv}")
        let map = try reply.decode([String: DBusValue].self, at: 0)
        #expect(map["Version"] == .string("9.8.7"))
        #expect(map["BluetoothdPresent"] == .boolean(true))
        #expect(map["PinnedReady"] == .uint32(1))
        #expect(map["PinnedTotal"] == .uint32(2))
        #expect(map["PoolConnected"] == .uint32(0))
        #expect(map["Devices"] == .uint32(3))
        #expect(map["Summary"] == .string("1/2 pinned ready, 0 pool, hci0 1/7 slots, hci1 off"))
        let adapters = try #require(try map.decodeIfPresent([[String: DBusValue]].self, forKey: "Adapters"))
        #expect(adapters.first == [
            "Id": .string("hci0"), "Powered": .boolean(true), "Slots": .uint32(7), "Used": .uint32(1),
            "Discovering": .boolean(true),
        ])
        #expect(adapters.count == 2)
    }

    @Test func listDevicesAnswersEveryDeviceByAddress() async throws {
        let reply = try await call("ListDevices")
        try reply.expectSignature("aa{sv}")
        let devices = try reply.decode([[String: DBusValue]].self, at: 0)
        #expect(devices.map { $0["Address"] } == ["AA:BB:CC:00:00:01", "AA:BB:CC:00:00:02", "AA:BB:CC:00:00:03"].map(DBusValue.string))
        let ready = devices[0]
        #expect(ready["Name"] == .string("strap-1"))
        #expect(ready["Pinned"] == .boolean(true))
        #expect(ready["Class"] == .string("heart-rate"))
        #expect(ready["State"] == .string("ready"))
        #expect(ready["Adapter"] == .string("hci0"))
        #expect(ready["RSSI"] == .int16(-61))
        #expect(ready["LastValue"] == .string("72 bpm, RR 812 ms"))
        #expect(ready["Sessions"] == .uint64(3))
        #expect(ready["Reconnects"] == .uint64(2))
        #expect(ready["Notifications"] == .uint64(1234))
        #expect(ready["DecodeErrors"] == .uint64(1))
        #expect(ready["LastError"] == .string("transient"))
        #expect(devices[1]["NextAttemptIn"] == .double(4.2))
        #expect(devices[2]["AddressType"] == .string("random"))
        #expect(devices[2]["StateReason"] == .string("gaveUp(denied)"))
    }

    @Test func getDeviceFindsADeviceInAnyLetterCase() async throws {
        let reply = try await call("GetDevice", [.string("aa:bb:cc:00:00:01")])
        let device = try ControlDevice(properties: try reply.decode([String: DBusValue].self, at: 0))
        #expect(device.name == "strap-1")
    }

    @Test("GetDevice names what is wrong", arguments: [
        ("AA:BB:CC:00:00:99", WearfleetControl.ErrorName.unknownDevice),
        ("not an address", WearfleetControl.ErrorName.invalidAddress),
        ("", WearfleetControl.ErrorName.invalidAddress),
    ])
    func getDeviceErrors(address: String, error: String) async throws {
        await #expect { try await call("GetDevice", [.string(address)]) } throws: { ($0 as? DBusError)?.name == error }
    }

    @Test func theClientReadsStatusAndDevicesTogether() async throws {
        let reader = ControlClient(connection: client, bus: bus.address)
        let status = try await reader.status()
        #expect(status.version == "9.8.7")
        #expect(status.devices.count == 3)
        await #expect(throws: ControlClientError.unknownDevice("AA:BB:CC:00:00:99")) { try await reader.device("AA:BB:CC:00:00:99") }
    }

    @Test func summaryIsAPropertyAndItsChangesAreAnnounced() async throws {
        let version = try await client.call(
            destination: WearfleetControl.busName, path: WearfleetControl.objectPath, interface: "org.freedesktop.DBus.Properties",
            member: "Get", [.string(WearfleetControl.interfaceName), .string("Version")])
        #expect(version == [.variant(.string("9.8.7"))])
        let changes = try await client.signals(matching: MatchRule(
            sender: WearfleetControl.busName, path: WearfleetControl.objectPath, interface: "org.freedesktop.DBus.Properties",
            member: "PropertiesChanged"))
        var status = box.get()
        status.devices[0].state = .ready  // the strap that was backing off
        box.set(status)
        let signal = try await changes.first(within: .seconds(5), "Summary to change") { _ in true }
        #expect(signal.body == [
            .string(WearfleetControl.interfaceName),
            .stringVariantMap(["Summary": .string("2/2 pinned ready, 0 pool, hci0 1/7 slots, hci1 off")]), .stringArray([]),
        ])
    }

    @Test func aSecondEndpointOnTheSameBusIsToldTheNameIsTaken() async throws {
        let box = self.box
        await #expect {
            try await ControlEndpoint.start(bus: .address(bus.address), logger: Self.quiet) { box.get() }
        } throws: { error in
            guard case ControlEndpointError.nameTaken(let owner)? = error as? ControlEndpointError else { return false }
            return owner == endpoint.connection.uniqueName
        }
        // The first one still answers.
        #expect(try await call("GetStatus").count == 1)
        #expect(await ControlEndpoint.startOrLog(bus: .address(bus.address), logger: Self.quiet) { box.get() } == nil)
    }

    @Test func stoppingReleasesTheNameSoReadersSeeTheDaemonGone() async throws {
        await endpoint.stop()
        await #expect { try await call("GetStatus") } throws: { ($0 as? DBusError)?.name == DBusError.serviceUnknown }
        let reader = ControlClient(connection: client, bus: "the test bus")
        await #expect(throws: ControlClientError.notRunning(bus: "the test bus")) { try await reader.status() }
    }

    @Test func anUnreachableBusIsAClearError() async throws {
        await #expect {
            try await ControlEndpoint.start(bus: .address("unix:path=/nonexistent/bus.socket"), logger: Self.quiet) { SampleFleet.status }
        } throws: { error in
            guard case ControlEndpointError.cannotConnect? = error as? ControlEndpointError else { return false }
            return "\(error)".contains("/nonexistent/bus.socket")
        }
    }
}
