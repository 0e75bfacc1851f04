import DBus
import Fleet
import FleetControl
import FleetCore
import Foundation
import Synchronization
import Testing
import TestSupport

/// The daemon's own check of who may command the fleet (`ControlAccess`), with credentials
/// injected: the rule itself, and the command methods refusing a caller the check denies.
@Suite("Who may command the fleet")
struct ControlAccessTests {
    static let admin: UInt32 = 61_237
    static let readers: UInt32 = 61_234

    @Test func rootAndAdminGroupMembersMayCommandNobodyElse() {
        #expect(ControlAccess.mayCommand(CallerCredentials(uid: 0, groups: []), adminGroup: Self.admin))
        #expect(ControlAccess.mayCommand(CallerCredentials(uid: 0, groups: []), adminGroup: nil), "root, even with no admin group")
        #expect(ControlAccess.mayCommand(CallerCredentials(uid: 1000, groups: [100, Self.admin]), adminGroup: Self.admin))
        #expect(!ControlAccess.mayCommand(CallerCredentials(uid: 1000, groups: [100, Self.readers]), adminGroup: Self.admin))
        #expect(!ControlAccess.mayCommand(CallerCredentials(uid: 1000, groups: []), adminGroup: Self.admin))
        #expect(!ControlAccess.mayCommand(CallerCredentials(uid: 1000, groups: [Self.admin]), adminGroup: nil), "no such group: root only")
        #expect(!ControlAccess.mayCommand(CallerCredentials(uid: Self.admin, groups: [100]), adminGroup: Self.admin), "a uid equal to the gid is not membership")
    }

    @Test func credentialsComeFromTheBusAnswerWithTheProcessGroupsWhenItHasThem() throws {
        let withGroups = try ControlAccess.callerCredentials(from: [
            "UnixUserID": .variant(.uint32(1000)), "ProcessID": .variant(.uint32(42)),
            "UnixGroupIDs": .variant(.array(element: .uint32, [.uint32(100), .uint32(Self.admin)])),
        ])
        #expect(withGroups == CallerCredentials(uid: 1000, groups: [100, Self.admin]))
        // An older bus tells no groups: the uid's groups in the group database (root's include 0).
        #expect(try ControlAccess.callerCredentials(from: ["UnixUserID": .variant(.uint32(0))]).groups.contains(0))
        #expect(throws: DBusError.self) { try ControlAccess.callerCredentials(from: ["ProcessID": .variant(.uint32(42))]) }
        #expect(throws: DBusError.self) {
            try ControlAccess.callerCredentials(from: [
                "UnixUserID": .variant(.uint32(1000)), "UnixGroupIDs": .variant(.array(element: .string, [.string("admin")])),
            ])
        }
    }

    @Test func theSystemsDatabasesAnswerForRoot() {
        #expect(ControlAccess.groupID(named: "root") == 0)
        #expect(ControlAccess.groups(ofUser: 0).contains(0))
        #expect(ControlAccess.groupID(named: "no-such-group-wearfleet") == nil)
        #expect(ControlAccess.groups(ofUser: 4_000_000_000).isEmpty, "a uid with no user entry has no groups")
    }

    /// Records what it was asked to do.
    final class RecordingFleet: FleetCommands {
        let calls = Mutex<[String]>([])

        func pin(_ device: DeviceID, options: FleetPinOptions) async throws(FleetCommandError) { record("pin \(device)") }
        func unpin(_ device: DeviceID) async throws(FleetCommandError) { record("unpin \(device)") }
        func disconnect(_ device: DeviceID) async throws(FleetCommandError) { record("disconnect \(device)") }
        func reconnect(_ device: DeviceID) async throws(FleetCommandError) { record("reconnect \(device)") }
        func read(_ device: DeviceID, characteristic: String) async throws(FleetCommandError) -> [UInt8] {
            record("read \(device)")
            return [1]
        }
        func writeAndWait(
            _ device: DeviceID, characteristic: String, bytes: [UInt8], qos: OutgoingQoS?, mode: OutgoingWriteMode, replaceable: Bool,
            budget: Duration
        ) async throws(FleetWriteError) -> FleetWriteOutcome {
            record("write \(device)")
            return .acknowledged
        }
        func subscribe(_ device: DeviceID, characteristic: String) async throws(FleetCommandError) { record("subscribe") }
        func unsubscribe(_ device: DeviceID, characteristic: String) async throws(FleetCommandError) { record("unsubscribe") }
        func pair(_ device: DeviceID) async throws(FleetCommandError) { record("pair") }
        func unpair(_ device: DeviceID) async throws(FleetCommandError) { record("unpair") }

        /// One strap heard 2.5 s ago that the pool would take, and a tag nothing is known of.
        func nearby(scanning: Duration?) async -> [FleetNearbyDevice] {
            record(scanning.map { "nearby \($0)" } ?? "nearby")
            return [
                FleetNearbyDevice(
                    id: DeviceID(address: BluetoothAddress("AA:BB:CC:00:00:09")!), name: "Strap 9", rssi: -61, lastReported: .milliseconds(2500),
                    services: ["0000180d-0000-1000-8000-00805f9b34fb"], adapters: [AdapterID("hci0")], poolClass: "strap"),
                FleetNearbyDevice(id: DeviceID(address: BluetoothAddress("DA:BB:CC:00:00:0A")!, addressType: .random), adapters: [AdapterID("hci1")]),
            ]
        }

        private func record(_ call: String) { calls.withLock { $0.append(call) } }
    }

    /// An endpoint whose access check sees every caller as `caller`.
    static func endpoint(on bus: PrivateBus, fleet: RecordingFleet, caller: CallerCredentials) async throws -> ControlEndpoint {
        let access = ControlAccess(adminGroup: { Self.admin }, credentials: { _ in caller })
        return try await ControlEndpoint.start(
            bus: .address(bus.address), logger: ControlEndpointTests.quiet, status: { SampleFleet.status }, commands: fleet, access: access)
    }

    @Test func aCallerTheDaemonDeniesGetsAccessDeniedAndWearfleetctlExits77() async throws {
        let bus = try PrivateBus()
        let fleet = RecordingFleet()
        // The private bus lets anyone call: only the daemon's own check stands in the way.
        let endpoint = try await Self.endpoint(on: bus, fleet: fleet, caller: CallerCredentials(uid: 1000, groups: [Self.readers]))
        let address = SampleFleet.status.devices[0].id.address.description
        for arguments in [["pin", address], ["unpin", address], ["disconnect", address], ["reconnect", address],
                          ["read", address, "2a19"], ["write", address, "2a39", "01"]] {
            let result = try await Commands.run(Commands.wearfleetctl, arguments + ["--bus", bus.address])
            #expect(result.status == ControlClientError.ExitCode.permissionDenied, "\(arguments[0])")
            #expect(result.errors.hasPrefix("wearfleetctl: permission denied: only root and members of the 'wearfleet-admin' group"))
        }
        #expect(fleet.calls.withLock { $0 }.isEmpty, "nothing reached the fleet")
        // Reading is not the daemon's to refuse (the bus policy decides it).
        let status = try await Commands.run(Commands.wearfleetctl, ["status", "--bus", bus.address])
        #expect(status.status == 0)
        await endpoint.stop()
    }

    @Test func anAdminGroupMembersCommandsReachTheFleet() async throws {
        let bus = try PrivateBus()
        let fleet = RecordingFleet()
        let endpoint = try await Self.endpoint(on: bus, fleet: fleet, caller: CallerCredentials(uid: 1000, groups: [100, Self.admin]))
        let address = SampleFleet.status.devices[0].id.address.description
        let pin = try await Commands.run(Commands.wearfleetctl, ["pin", address, "--bus", bus.address])
        #expect(pin.status == 0, "\(pin.errors)")
        let write = try await Commands.run(Commands.wearfleetctl, ["write", address, "2a39", "01", "--bus", bus.address])
        #expect(write.status == 0 && write.output.hasPrefix("acknowledged: 1 byte"), "\(write.errors)")
        #expect(fleet.calls.withLock { $0 }.count == 2)
        await endpoint.stop()
    }

    /// `nearby` end to end through D-Bus: the records as the daemon encodes them, read back by
    /// wearfleetctl into a table or JSON, and the scan asked for reaching the fleet.
    @Test func nearbyListsWhatTheRadioHearsAsATableOrJSON() async throws {
        let bus = try PrivateBus()
        let fleet = RecordingFleet()
        let endpoint = try await Self.endpoint(on: bus, fleet: fleet, caller: CallerCredentials(uid: 0, groups: []))
        let table = try await Commands.run(Commands.wearfleetctl, ["nearby", "--bus", bus.address])
        #expect(table.status == 0, "\(table.errors)")
        let lines = table.output.split(separator: "\n")
        #expect(lines.first?.hasPrefix("ADDRESS") == true && lines.first?.contains("LAST REPORT SECONDS") == true)
        #expect(lines.count == 3 && lines[1].hasPrefix("AA:BB:CC:00:00:09  public") && lines[1].contains("-61") && lines[1].contains("2.5"))
        #expect(lines[2].hasPrefix("DA:BB:CC:00:00:0A  random"))
        let json = try await Commands.run(Commands.wearfleetctl, ["nearby", "--scan", "3", "--json", "--bus", bus.address])
        #expect(json.status == 0, "\(json.errors)")
        let object = try #require(try JSONSerialization.jsonObject(with: Data(json.output.utf8)) as? [String: Any])
        #expect(object["command"] as? String == "nearby" && object["address"] == nil)
        let records = try #require(object["records"] as? [[String: Any]])
        #expect(records.count == 2)
        #expect(records[0]["address"] as? String == "AA:BB:CC:00:00:09" && records[0]["rssi"] as? Int == -61)
        #expect(records[0]["last_report_seconds"] as? Double == 2.5 && records[0]["pool_class"] as? String == "strap")
        #expect(records[0]["services"] as? [String] == ["0000180d-0000-1000-8000-00805f9b34fb"])
        #expect(records[1]["address_type"] as? String == "random" && records[1]["rssi"] == nil && records[1]["name"] == nil)
        #expect(fleet.calls.withLock { $0 } == ["nearby", "nearby 3.0 seconds"])
        let tooLong = try await Commands.run(Commands.wearfleetctl, ["nearby", "--scan", "60", "--bus", bus.address])
        #expect(tooLong.status == ControlClientError.ExitCode.usage)
        await endpoint.stop()
    }

    @Test func aCallerWhoseCredentialsCannotBeHadIsDenied() async throws {
        let bus = try PrivateBus()
        let fleet = RecordingFleet()
        let access = ControlAccess(adminGroup: { Self.admin }, credentials: { _ in throw DBusError(name: DBusError.failed, message: "gone") })
        let endpoint = try await ControlEndpoint.start(
            bus: .address(bus.address), logger: ControlEndpointTests.quiet, status: { SampleFleet.status }, commands: fleet, access: access)
        let connection = try await DBusConnection.connect(to: .address(bus.address), threadName: "access-test")
        await #expect {
            _ = try await connection.call(
                destination: WearfleetControl.busName, path: WearfleetControl.objectPath, interface: WearfleetControl.interfaceName,
                member: "Reconnect", [.string("AA:BB:CC:00:00:01")])
        } throws: { ($0 as? DBusError)?.name == DBusError.accessDenied }
        #expect(fleet.calls.withLock { $0 }.isEmpty)
        await connection.close()
        await endpoint.stop()
    }
}
