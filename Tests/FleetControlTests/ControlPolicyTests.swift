import BlueZSimulator
import DBus
import Fleet
import FleetControl
import Foundation
import Testing
import TestSupport

/// `systemd/org.wearfleet.Daemon.conf` loaded by a real dbus-daemon: who may own the name, who
/// may call the daemon, and that everyone else is refused.
@Suite("The D-Bus policy for org.wearfleet.Daemon")
struct ControlPolicyTests {
    /// A dbus-daemon with a session-like configuration (anyone may connect, call and own) that
    /// includes one policy file; `address` is nil when dbus-daemon refused the configuration.
    final class IncludingBus {
        let process: ChildProcess
        let directory: URL
        let address: String?

        init(including policy: String) throws {
            directory = FileManager.default.temporaryDirectory.appendingPathComponent("wearfleet-policy-\(UUID().uuidString)")
            try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
            let config = directory.appendingPathComponent("bus.conf")
            try """
                <!DOCTYPE busconfig PUBLIC "-//freedesktop//DTD D-Bus Bus Configuration 1.0//EN"
                 "http://www.freedesktop.org/standards/dbus/1.0/busconfig.dtd">
                <busconfig>
                  <type>session</type>
                  <listen>unix:path=\(directory.appendingPathComponent("bus.socket").path)</listen>
                  <auth>EXTERNAL</auth>
                  <policy context="default">
                    <allow user="*"/>
                    <allow own="*"/>
                    <allow send_destination="*" eavesdrop="true"/>
                    <allow eavesdrop="true"/>
                  </policy>
                  <include>\(policy)</include>
                </busconfig>
                """.write(to: config, atomically: true, encoding: .utf8)
            process = try ChildProcess(
                "/usr/bin/dbus-daemon", ["--config-file=\(config.path)", "--nofork", "--print-address=1"],
                stderrPath: directory.appendingPathComponent("bus.log").path)
            address = try? process.readLine(within: 10)
        }

        deinit {
            process.terminate()
            try? FileManager.default.removeItem(at: directory)
        }
    }

    /// A policy file with `text` inside `<busconfig>`, in a scratch file.
    static func policy(_ text: String) throws -> URL {
        let file = FileManager.default.temporaryDirectory.appendingPathComponent("wearfleet-policy-\(UUID().uuidString).conf")
        try text.write(to: file, atomically: true, encoding: .utf8)
        return file
    }

    @Test func dbusDaemonAcceptsThePolicyAndRefusesABrokenCopy() throws {
        let good = try IncludingBus(including: PolicyBus.policyFile.path)
        #expect(good.address?.hasPrefix("unix:") == true, "dbus-daemon starts with the policy file")

        // The same check fails on a malformed copy, so it can tell the difference.
        let text = try String(contentsOf: PolicyBus.policyFile, encoding: .utf8)
        let broken = try Self.policy(text.replacingOccurrences(of: "</busconfig>", with: ""))
        defer { try? FileManager.default.removeItem(at: broken) }
        let bad = try IncludingBus(including: broken.path)
        #expect(bad.address == nil)
        #expect(bad.process.waitForExit() != 0)
    }

    @Test func aBusThatForbidsTheNameIsReportedAsAPolicyProblem() async throws {
        let forbidding = try Self.policy("""
            <!DOCTYPE busconfig PUBLIC "-//freedesktop//DTD D-Bus Bus Configuration 1.0//EN"
             "http://www.freedesktop.org/standards/dbus/1.0/busconfig.dtd">
            <busconfig><policy context="default"><deny own="\(WearfleetControl.busName)"/></policy></busconfig>
            """)
        defer { try? FileManager.default.removeItem(at: forbidding) }
        let bus = try IncludingBus(including: forbidding.path)
        let address = try #require(bus.address)
        await #expect {
            try await ControlEndpoint.start(bus: .address(address), logger: ControlEndpointTests.quiet) { SampleFleet.status }
        } throws: { error in
            guard case ControlEndpointError.notPermitted? = error as? ControlEndpointError else { return false }
            return "\(error)".contains("install systemd/org.wearfleet.Daemon.conf")
        }
    }

    @Test(.enabled(if: PolicyBus.isPossible, "needs root: a mount namespace and other uids"))
    func onlyRootAndTheWearfleetGroupMayCallAndOnlyWearfleetAndRootMayOwn() async throws {
        // The daemon as user wearfleet (not in the bluetooth group here): it may own its name,
        // and this file alone lets it call bluetoothd (its strap becomes ready).
        let strap = "AA:BB:CC:00:00:01"
        let fleet = try await PolicyFleet.start(straps: [strap], pinned: [strap], seed: 1)
        defer { fleet.files.remove() }
        let bus = fleet.bus

        let ctl = [Commands.wearfleetctl, "status", "--bus", bus.address]
        let root = try await Commands.run(ctl)
        #expect(root.status == 0)
        #expect(root.output.contains("1/1 pinned ready"))

        let member = PolicyBus.asUser(PolicyBus.operatorUID, group: PolicyBus.nobodyUID, groups: [PolicyBus.wearfleetUID])
        let asMember = try await Commands.run(member + ctl)
        #expect(asMember.status == 0, "a member of the wearfleet group may query: \(asMember.errors)")
        #expect(asMember.output.hasPrefix("wearfleetd \(WearfleetVersion.current): 1/1 pinned ready"))
        let introspect = try await Commands.run(
            member + ["/usr/bin/busctl", "--address=\(bus.address)", "introspect", WearfleetControl.busName, WearfleetControl.objectPath.rawValue])
        #expect(introspect.status == 0, "members reach the standard interfaces too")

        let nobody = PolicyBus.asUser(PolicyBus.nobodyUID, group: PolicyBus.nobodyUID)
        let asNobody = try await Commands.run(nobody + ctl)
        #expect(asNobody.status == ControlClientError.ExitCode.permissionDenied)
        #expect(asNobody.errors.hasPrefix("wearfleetctl: permission denied: only root and members of the 'wearfleet' group"))
        #expect(asNobody.output.isEmpty)

        // Addressing the daemon's unique name instead of the well-known one does not get round it.
        let observer = try await DBusConnection.connect(to: .address(bus.address), threadName: "policy-observer")
        let owner = try #require(try await observer.nameOwner(of: WearfleetControl.busName))
        let ping = try await Commands.run(
            nobody + ["/usr/bin/busctl", "--address=\(bus.address)", "call", owner, WearfleetControl.objectPath.rawValue,
                      "org.freedesktop.DBus.Peer", "Ping"])
        #expect(ping.status != 0)
        #expect(ping.errors.contains("Access denied"))

        // Neither an outsider nor an operator may take the name.
        for user in [nobody, member] {
            let claim = try await Commands.run(
                user + ["/usr/bin/dbus-send", "--bus=\(bus.address)", "--print-reply", "--dest=org.freedesktop.DBus",
                        "/org/freedesktop/DBus", "org.freedesktop.DBus.RequestName", "string:\(WearfleetControl.busName)", "uint32:4"])
            #expect(claim.status != 0)
            #expect(claim.errors.contains("org.freedesktop.DBus.Error.AccessDenied"))
        }

        #expect(await fleet.daemon.stop() == 0)
        // Root may own it too (running the daemon by hand).
        let endpoint = try await ControlEndpoint.start(bus: .address(bus.address), logger: ControlEndpointTests.quiet) { SampleFleet.status }
        await endpoint.stop()
        await observer.close()
        await fleet.simulator.stop()
    }

    @Test(.enabled(if: PolicyBus.isPossible, "needs root: a mount namespace and other uids"))
    func onlyRootAndTheAdminGroupMayCommandTheFleet() async throws {
        // The daemon as user wearfleet, seeing the same user and group databases as dbus-daemon.
        let straps = ["AA:BB:CC:00:00:01", "AA:BB:CC:00:00:02"]
        let fleet = try await PolicyFleet.start(straps: straps, pinned: [straps[0]], seed: 2, daemonSeesBusUsers: true)
        defer { fleet.files.remove() }
        let bus = fleet.bus

        let pin = [Commands.wearfleetctl, "pin", straps[1], "--class", "strap", "--bus", bus.address]
        let unpin = [Commands.wearfleetctl, "unpin", straps[1], "--bus", bus.address]
        let denial = "wearfleetctl: permission denied: only root and members of the 'wearfleet-admin' group"

        // A reader (group wearfleet) may read but not command; an outsider may do neither.
        let member = PolicyBus.asUser(PolicyBus.operatorUID, group: PolicyBus.nobodyUID, groups: [PolicyBus.wearfleetUID])
        let nobody = PolicyBus.asUser(PolicyBus.nobodyUID, group: PolicyBus.nobodyUID)
        for user in [member, nobody] {
            let denied = try await Commands.run(user + pin)
            #expect(denied.status == ControlClientError.ExitCode.permissionDenied)
            #expect(denied.errors.hasPrefix(denial), "\(denied.errors)")
        }
        let read = try await Commands.run(member + [Commands.wearfleetctl, "status", "--json", "--bus", bus.address])
        #expect(read.status == 0)
        let listed = try #require(try JSONSerialization.jsonObject(with: Data(read.output.utf8)) as? [String: Any])
        let spare = (listed["devices"] as? [[String: Any]] ?? []).first { $0["address"] as? String == straps[1] }
        #expect(spare?["pinned"] as? Bool != true, "nothing was pinned")

        // An administrator may: the bus lets the call through and so does the daemon's own check.
        let admin = PolicyBus.asUser(PolicyBus.adminUID, group: PolicyBus.nobodyUID, groups: [PolicyBus.adminUID])
        let pinned = try await Commands.run(admin + pin)
        #expect(pinned.status == 0, "\(pinned.errors)")
        #expect(pinned.output == "pinned \(straps[1])")
        let status = try await Commands.run(admin + [Commands.wearfleetctl, "status", "--bus", bus.address])
        #expect(status.status == 0, "an administrator may read too")
        let unpinned = try await Commands.run(admin + unpin)
        #expect(unpinned.status == 0, "\(unpinned.errors)")
        // Root may too.
        let asRoot = try await Commands.run(pin)
        #expect(asRoot.status == 0, "\(asRoot.errors)")

        #expect(await fleet.daemon.stop() == 0)
        await fleet.simulator.stop()
    }
}
