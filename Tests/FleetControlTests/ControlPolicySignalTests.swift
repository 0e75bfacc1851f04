import BlueZSimulator
import DBus
import FleetControl
import Foundation
import ProcessSupport
import Testing
import TestSupport

/// The daemon's signals under the installed bus policy, with real uids: a member of group
/// `wearfleet` receives `DeviceStateChanged`, an outsider receives none of the daemon's signals
/// (the system bus lets anyone receive broadcast signals unless a policy says otherwise).
@Suite("The daemon's signals under the installed bus policy")
struct ControlPolicySignalTests {
    /// `dbus-monitor` as `user`, listening for the daemon's signals and for a marker interface;
    /// returns once its match rules are in place (it prints the bus's `NameAcquired` after
    /// adding them).
    static func monitor(_ user: [String], bus: String) throws -> ChildProcess {
        let command = user + [
            "/usr/bin/dbus-monitor", "--address", bus,
            "type='signal',sender='\(WearfleetControl.busName)'", "type='signal',interface='\(marker)'",
        ]
        let process = try ChildProcess(command[0], Array(command.dropFirst()))
        while !(try process.readLine(within: 10)).contains("NameAcquired") {}
        return process
    }

    static let marker = "org.wearfleet.Test.Marker"

    /// Reads `monitor`'s lines until one contains `text`; returns the lines read.
    static func lines(of monitor: ChildProcess, until text: String) throws -> [String] {
        var lines: [String] = []
        while true {
            let line = try monitor.readLine(within: 20)
            lines.append(line)
            if line.contains(text) { return lines }
        }
    }

    @Test(.enabled(if: PolicyBus.isPossible, "needs root: a mount namespace and other uids"))
    func readersReceiveStateChangesAndOutsidersNothing() async throws {
        let strap = "AA:BB:CC:00:00:01"
        let fleet = try await PolicyFleet.start(straps: [strap], pinned: [strap], seed: 3, daemonSeesBusUsers: true)
        defer { fleet.files.remove() }
        let bus = fleet.bus

        let reader = try Self.monitor(
            PolicyBus.asUser(PolicyBus.operatorUID, group: PolicyBus.nobodyUID, groups: [PolicyBus.wearfleetUID]), bus: bus.address)
        let outsider = try Self.monitor(PolicyBus.asUser(PolicyBus.nobodyUID, group: PolicyBus.nobodyUID), bus: bus.address)

        // Root disconnects the ready strap: a state change, so a DeviceStateChanged.
        let disconnect = try await Commands.run([Commands.wearfleetctl, "disconnect", strap, "--bus", bus.address])
        #expect(disconnect.status == 0, "\(disconnect.errors)")
        let seen = try Self.lines(of: reader, until: "member=DeviceStateChanged")
        #expect(seen.last?.contains("interface=\(WearfleetControl.interfaceName)") == true)

        // A marker anyone may receive, sent after the reader had the daemon's signal: once the
        // outsider has it, it would have had the daemon's signal before it.
        let mark = try await Commands.run(["/usr/bin/dbus-send", "--bus=\(bus.address)", "--type=signal", "/", "\(Self.marker).Ping"])
        #expect(mark.status == 0, "\(mark.errors)")
        let outsiderSaw = try Self.lines(of: outsider, until: "member=Ping")
        #expect(!outsiderSaw.contains { $0.contains("sender=\(WearfleetControl.busName)") || $0.contains("DeviceStateChanged") },
                "the outsider received the daemon's signals: \(outsiderSaw)")
        #expect(!outsiderSaw.contains { $0.contains("PropertiesChanged") })
        _ = try Self.lines(of: reader, until: "member=Ping")

        reader.terminate()
        outsider.terminate()
        #expect(await fleet.daemon.stop() == 0)
        await fleet.simulator.stop()
    }
}
