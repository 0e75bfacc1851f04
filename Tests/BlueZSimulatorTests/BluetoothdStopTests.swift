import BlueZSimulator
import DBus
import Foundation
import Glibc
import Testing
import TestSupport

/// How the simulated bluetoothd goes away and comes back, as Debian 12's bluetoothd 5.66 did on
/// the real stack (Linux 6.1, bumble controllers): stopped by SIGTERM, or killed by SIGKILL.
@Suite("bluetoothd stopped or killed", .serialized)
struct BluetoothdStopTests {
    static let hci0: DBusObjectPath = "/org/bluez/hci0"

    /// Whether the client's end of a socket sees its peer gone (data may still be queued).
    static func hungUp(_ fd: Int32) -> Bool {
        var watched = pollfd(fd: fd, events: 0, revents: 0)
        return poll(&watched, 1, 0) == 1 && watched.revents & Int16(POLLHUP | POLLERR) != 0
    }

    /// Connects `address` and acquires the notify socket of its characteristic `uuid`.
    static func connectWithNotifySocket(
        _ fixture: SimulatorFixture, _ address: String, _ uuid: String
    ) async throws -> (device: DBusObjectPath, fd: Int32) {
        let device = try await fixture.connect(address)
        let characteristic = try await fixture.characteristic(uuid, of: device)
        let reply = try await fixture.call(characteristic, "org.bluez.GattCharacteristic1", "AcquireNotify", [.stringVariantMap([:])])
        let fd = try #require(try reply.fileDescriptor(at: 0).take())
        return (device, fd)
    }

    /// Whether `message` says `org.bluez` left the bus (`gone`) or got an owner.
    static func orgBlueZOwnerChanged(_ message: DBusMessage, gone: Bool) -> Bool {
        message.member == "NameOwnerChanged" && (try? message.body.decode(String.self, at: 0)) == "org.bluez"
            && (try? message.body.decode(String.self, at: 2))?.isEmpty == gone
    }

    static func changed(_ message: DBusMessage) -> [String: DBusValue] {
        guard message.member == "PropertiesChanged" else { return [:] }
        return (try? message.body.decode([String: DBusValue].self, at: 1)) ?? [:]
    }

    @Test("a restart stops as bluetoothd 5.66 on SIGTERM: notify sockets hang up, links end without a reason, the adapter powers off, then the name goes")
    func restartStopsAsOnSIGTERM() async throws {
        let fixture = try await SimulatorFixture.start(.trio)
        let (strapPath, strapSocket) = try await Self.connectWithNotifySocket(fixture, strap, heartRateMeasurementUUID)
        defer { close(strapSocket) }
        let (bandPath, bandSocket) = try await Self.connectWithNotifySocket(fixture, band, motionDataUUID)
        defer { close(bandSocket) }
        let owner = try #require(await fixture.simulator.uniqueName)
        // Every signal on the bus, in the order the bus delivers them.
        let everything = try await fixture.client.signals(matching: MatchRule())
        try await fixture.control("RestartBluetoothd", [.double(0.1)])
        let seen = try await withTimeout(.seconds(60), "org.bluez to leave the bus") {
            var seen: [String] = []
            for try await message in everything {
                if Self.orgBlueZOwnerChanged(message, gone: true) {
                    seen.append("name gone")
                    return seen
                }
                guard message.sender == owner, let path = message.path else { continue }
                let name = path == strapPath ? "strap" : path == bandPath ? "band" : path == Self.hci0 ? "hci0" : nil
                switch message.member {
                case "PropertiesChanged":
                    let values = Self.changed(message)
                    if name == "strap" || name == "band", let connected = values["Connected"] {
                        // Every socket hung up before the first link was reported gone.
                        let sockets = [strapSocket, bandSocket].map { Self.hungUp($0) ? "hung up" : "open" }
                        seen.append("\(name ?? "?") Connected=\(connected), sockets \(sockets.joined(separator: " "))")
                    }
                    if name == "hci0", let state = values["PowerState"] {
                        seen.append("hci0 PowerState=\(state) Powered=\(values["Powered"].map { "\($0)" } ?? "-")")
                    }
                case "Disconnected", "InterfacesRemoved":
                    seen.append("\(member(message)) \(path)")
                default:
                    continue
                }
            }
            return seen
        }
        #expect(
            seen == [
                "strap Connected=\(DBusValue.boolean(false)), sockets hung up hung up",
                "band Connected=\(DBusValue.boolean(false)), sockets hung up hung up",
                "hci0 PowerState=\(DBusValue.string("off")) Powered=\(DBusValue.boolean(false))", "name gone",
            ], "\(seen)")
        // The next bluetoothd powers the adapter on again and knows the devices Connect made
        // permanent, disconnected.
        _ = try await everything.first(within: .seconds(60), "org.bluez to return") { Self.orgBlueZOwnerChanged($0, gone: false) }
        let objects = try await fixture.managedObjects()
        #expect(objects[Self.hci0]?["org.bluez.Adapter1"]?["Powered"] == .boolean(true))
        #expect(objects[Self.hci0]?["org.bluez.Adapter1"]?["PowerState"] == .string("on"))
        #expect(objects[strapPath]?["org.bluez.Device1"]?["Connected"] == .boolean(false))
        await fixture.stop()
    }

    @Test("a killed bluetoothd leaves its links to the kernel: reported connected and unresolved after the restart, then ended without a reason")
    func killedBluetoothdLeavesLinksBehind() async throws {
        var timings = SimulatorTimings.fast
        // Far beyond the restart's 50 ms, so that even a starved simulator is back before the
        // kernel ends the links, as a bluetoothd started again at once is on a gateway.
        timings.leftBehindLinkTimeout = 3
        let fixture = try await SimulatorFixture.start(.trio, timings: timings)
        let (strapPath, fd) = try await Self.connectWithNotifySocket(fixture, strap, heartRateMeasurementUUID)
        defer { close(fd) }
        // No discovery: its RSSI updates, sent until the kill, would be news from before it.
        try await fixture.call(Self.hci0, "org.bluez.Adapter1", "StopDiscovery")
        let owner = try #require(await fixture.simulator.uniqueName)
        let everything = try await fixture.client.signals(matching: MatchRule())
        try await fixture.control("KillBluetoothd", [.double(0.05)])
        let announced = try await withTimeout(.seconds(60), "org.bluez to leave the bus") {
            var announced: [String] = []
            for try await message in everything {
                if Self.orgBlueZOwnerChanged(message, gone: true) { return announced }
                if message.sender == owner { announced.append("\(member(message)) \(message.path.map { "\($0)" } ?? "")") }
            }
            return announced
        }
        #expect(announced.isEmpty, "a killed bluetoothd says nothing before its name goes: \(announced)")
        #expect(Self.hungUp(fd), "the notify socket closed with the process")

        // The next bluetoothd learns the link from the kernel: connected, services not resolved
        // (no ATT bearer of its own on it), no GATT objects.
        let back = try await everything.first(within: .seconds(60), "org.bluez to return") { Self.orgBlueZOwnerChanged($0, gone: false) }
        let newOwner = try back.body.decode(String.self, at: 2)
        let objects = try await fixture.managedObjects()
        #expect(objects[strapPath]?["org.bluez.Device1"]?["Connected"] == .boolean(true))
        #expect(objects[strapPath]?["org.bluez.Device1"]?["ServicesResolved"] == .boolean(false))
        #expect(!objects.keys.contains { $0 != strapPath && $0.isDescendant(of: strapPath) }, "no GATT objects under the strap")
        // A Connect on it answers at once, as bluetoothd does for an LE link it has.
        try await fixture.call(strapPath, "org.bluez.Device1", "Connect")

        // The kernel ends the link: Connected false.
        _ = try await everything.first(within: .seconds(60), "the left-behind link to end") {
            $0.sender == newOwner && $0.path == strapPath && Self.changed($0)["Connected"] == .boolean(false)
        }
        // Then the strap advertises again: discovery hears it. What the simulator said of the
        // link's end came before what it says of the discovery (the bus keeps a sender's order),
        // and BlueZ 5.66 has no Disconnected signal.
        try await fixture.call(Self.hci0, "org.bluez.Adapter1", "StartDiscovery")
        let afterTheEnd = try await withTimeout(.seconds(60), "discovery to start and hear the strap") {
            var seen: [String] = []
            var discovering = false
            var heard = false
            for try await message in everything where message.sender == newOwner {
                if message.path == Self.hci0, Self.changed(message)["Discovering"] == .boolean(true) { discovering = true }
                if message.path == strapPath {
                    seen.append(member(message))
                    if Self.changed(message)["RSSI"] != nil { heard = true }
                }
                if discovering && heard { return seen }
            }
            return seen
        }
        #expect(!afterTheEnd.contains("Disconnected"), "\(afterTheEnd)")
        try await fixture.call(strapPath, "org.bluez.Device1", "Connect")
        #expect(try await fixture.property(strapPath, "org.bluez.Device1", "ServicesResolved") == .boolean(true))
        await fixture.stop()
    }

    @Test("a scenario's restart may say killed")
    func killedInAScenario() throws {
        let json = #"{ "at": 5, "fault": { "kind": "restart", "seconds": 1, "killed": true } }"#
        let entry = try JSONDecoder().decode(ScheduledFault.self, from: Data(json.utf8))
        #expect(entry.fault == FaultCommand(.restart, seconds: 1, killed: true))
        let timings = try JSONDecoder().decode(SimulatorTimings.self, from: Data(#"{ "leftBehindLinkTimeout": 4 }"#.utf8))
        #expect(timings.leftBehindLinkTimeout == 4)
        #expect(SimulatorTimings().leftBehindLinkTimeout == 2)
    }
}

/// A signal's member and, for `PropertiesChanged`, the properties it changed.
private func member(_ message: DBusMessage) -> String {
    let name = message.member ?? "?"
    guard name == "PropertiesChanged", let values = try? message.body.decode([String: DBusValue].self, at: 1) else { return name }
    return "\(name)(\(values.keys.sorted().joined(separator: ",")))"
}
