import Foundation
import TestSupport

/// A dbus-daemon configured like Debian's system bus (method calls and name ownership denied
/// unless a policy allows them) that includes the project's policy file,
/// `systemd/org.wearfleet.Daemon.conf`, unchanged.
///
/// The policy names the user and group `wearfleet`, which this machine does not have, and the
/// machine's /etc/passwd and /etc/group must not change. So the daemon runs in a mount namespace
/// of its own where copies of both files, with `wearfleet` (uid and gid 61234) and an operator
/// in its group (`wearfleet-operator`, uid 61236) added, are bind-mounted over the originals:
/// dbus-daemon resolves the policy's names to those ids, and nothing outside it sees them.
/// Clients then run with those ids through `setpriv`. Needs root (for `unshare`, `mount` and
/// `setpriv`).
final class PolicyBus: Sendable {
    static let wearfleetUID = 61234
    static let operatorUID = 61236
    /// `wearfleet-admin-user`, alone in group `wearfleet-admin` (gid the same number).
    static let adminUID = 61237
    static let nobodyUID = 65534

    let address: String
    let directory: URL
    private let process: ChildProcess

    /// The policy file as the repository has it.
    static var policyFile: URL {
        URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
            .appendingPathComponent("systemd/org.wearfleet.Daemon.conf")
    }

    /// Whether this process may run the test: root, with `unshare` and `setpriv`.
    static var isPossible: Bool {
        getuid() == 0 && FileManager.default.isExecutableFile(atPath: "/usr/bin/unshare")
            && FileManager.default.isExecutableFile(atPath: "/usr/bin/setpriv")
    }

    init() throws {
        directory = FileManager.default.temporaryDirectory.appendingPathComponent("wearfleet-policy-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        let passwd = directory.appendingPathComponent("passwd")
        let group = directory.appendingPathComponent("group")
        let config = directory.appendingPathComponent("bus.conf")
        let socket = directory.appendingPathComponent("bus.socket").path
        try (String(contentsOfFile: "/etc/passwd", encoding: .utf8) + """
            wearfleet:x:\(Self.wearfleetUID):\(Self.wearfleetUID)::/nonexistent:/usr/sbin/nologin
            wearfleet-operator:x:\(Self.operatorUID):\(Self.nobodyUID)::/nonexistent:/usr/sbin/nologin
            wearfleet-admin-user:x:\(Self.adminUID):\(Self.nobodyUID)::/nonexistent:/usr/sbin/nologin

            """).write(to: passwd, atomically: true, encoding: .utf8)
        try (String(contentsOfFile: "/etc/group", encoding: .utf8) + "wearfleet:x:\(Self.wearfleetUID):wearfleet-operator\n"
            + "wearfleet-admin:x:\(Self.adminUID):wearfleet-admin-user\n")
            .write(to: group, atomically: true, encoding: .utf8)
        try Self.configuration(socketPath: socket, policy: Self.policyFile.path).write(to: config, atomically: true, encoding: .utf8)
        // Clients running as other users reach the socket through this directory.
        try FileManager.default.setAttributes([.posixPermissions: 0o755], ofItemAtPath: directory.path)

        let script = "mount --bind \"$1\" /etc/passwd && mount --bind \"$2\" /etc/group && "
            + "exec /usr/bin/dbus-daemon --config-file=\"$3\" --nofork --print-address=1"
        process = try ChildProcess(
            "/usr/bin/unshare", ["--mount", "--propagation", "private", "--", "/bin/sh", "-c", script, "sh", passwd.path, group.path, config.path],
            stderrPath: directory.appendingPathComponent("bus.log").path)
        let printed = (try? process.readLine(within: 10)) ?? ""
        guard printed.hasPrefix("unix:") else {
            process.terminate()
            let log = (try? String(contentsOf: directory.appendingPathComponent("bus.log"), encoding: .utf8)) ?? ""
            try? FileManager.default.removeItem(at: directory)
            throw PrivateBusError.didNotStart(printed + " " + log)
        }
        address = printed
    }

    /// Debian 12's /usr/share/dbus-1/system.conf default policy (the parts that decide who may
    /// own names and call methods), root allowed to own bluetoothd's names as Debian's
    /// bluetooth.conf does, and the policy under test.
    static func configuration(socketPath: String, policy: String) -> String {
        """
        <!DOCTYPE busconfig PUBLIC "-//freedesktop//DTD D-Bus Bus Configuration 1.0//EN"
         "http://www.freedesktop.org/standards/dbus/1.0/busconfig.dtd">
        <busconfig>
          <type>system</type>
          <listen>unix:path=\(socketPath)</listen>
          <auth>EXTERNAL</auth>
          <policy context="default">
            <allow user="*"/>
            <deny own="*"/>
            <deny send_type="method_call"/>
            <allow send_type="signal"/>
            <allow send_requested_reply="true" send_type="method_return"/>
            <allow send_requested_reply="true" send_type="error"/>
            <allow receive_type="method_call"/>
            <allow receive_type="method_return"/>
            <allow receive_type="error"/>
            <allow receive_type="signal"/>
            <allow send_destination="org.freedesktop.DBus" send_interface="org.freedesktop.DBus"/>
            <allow send_destination="org.freedesktop.DBus" send_interface="org.freedesktop.DBus.Introspectable"/>
            <allow send_destination="org.freedesktop.DBus" send_interface="org.freedesktop.DBus.Properties"/>
          </policy>
          <policy user="root">
            <allow own="org.bluez"/>
            <allow own="org.wearfleet.Simulator"/>
            <allow send_destination="org.bluez"/>
          </policy>
          <include>\(policy)</include>
        </busconfig>
        """
    }

    /// A command prefix that runs in the bus's mount namespace, where the copies of /etc/passwd
    /// and /etc/group are: for a daemon that looks up its callers' groups as dbus-daemon does.
    var inNamespace: [String] { ["/usr/bin/nsenter", "--target=\(process.pid)", "--mount", "--"] }

    /// A command prefix that runs as `uid`/`gid` with exactly the supplementary `groups`.
    static func asUser(_ uid: Int, group gid: Int, groups: [Int] = []) -> [String] {
        let supplementary = groups.isEmpty ? "--clear-groups" : "--groups=" + groups.map(String.init).joined(separator: ",")
        return ["/usr/bin/setpriv", "--reuid=\(uid)", "--regid=\(gid)", supplementary, "--"]
    }

    func stop() {
        process.terminate()
        try? FileManager.default.removeItem(at: directory)
    }

    deinit { stop() }
}
