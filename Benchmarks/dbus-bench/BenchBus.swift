import Foundation

/// A dbus-daemon of the benchmark's own, on a socket in a fresh temporary directory, so a run
/// measures only its own traffic and never touches the machine's buses.
final class BenchBus {
    let address: String
    let directory: String
    private let daemon: ChildProcess

    init() throws {
        directory = NSTemporaryDirectory() + "wearfleet-bench-\(UUID().uuidString)"
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        let config = directory + "/bus.conf"
        try Self.configuration(socketPath: directory + "/bus.socket").write(toFile: config, atomically: true, encoding: .utf8)
        daemon = try ChildProcess("/usr/bin/dbus-daemon", ["--config-file=\(config)", "--nofork", "--print-address=1"])
        // The first line is the address: once printed, the daemon is listening.
        let printed = try daemon.readLine(within: 10)
        guard printed.hasPrefix("unix:") else { throw BenchError("dbus-daemon did not start (printed: \(printed))") }
        address = printed
    }

    var pid: pid_t { daemon.pid }

    /// A session-like bus with limits high enough that a flood of signals is queued, not dropped
    /// (a dropped signal would make the receivers wait for the end marker in vain).
    static func configuration(socketPath: String) -> String {
        """
        <!DOCTYPE busconfig PUBLIC "-//freedesktop//DTD D-Bus Bus Configuration 1.0//EN"
         "http://www.freedesktop.org/standards/dbus/1.0/busconfig.dtd">
        <busconfig>
          <type>session</type>
          <listen>unix:path=\(socketPath)</listen>
          <auth>EXTERNAL</auth>
          <policy context="default">
            <allow send_destination="*" eavesdrop="true"/>
            <allow eavesdrop="true"/>
            <allow own="*"/>
          </policy>
          <limit name="max_incoming_bytes">1000000000</limit>
          <limit name="max_outgoing_bytes">1000000000</limit>
          <limit name="max_message_size">1000000000</limit>
          <limit name="max_replies_per_connection">50000</limit>
          <limit name="reply_timeout">300000</limit>
        </busconfig>
        """
    }

    /// CPU time (user + system) the daemon has used so far, in microseconds, from /proc.
    func cpuMicroseconds() -> Double {
        guard let stat = try? String(contentsOfFile: "/proc/\(daemon.pid)/stat", encoding: .utf8),
            let afterName = stat.lastIndex(of: ")")
        else { return 0 }
        // Fields after "(comm)": state is field 3; utime and stime are fields 14 and 15.
        let fields = stat[stat.index(after: afterName)...].split(separator: " ")
        guard fields.count > 12, let user = Double(fields[11]), let system = Double(fields[12]) else { return 0 }
        return (user + system) * 1_000_000 / Double(sysconf(Int32(_SC_CLK_TCK)))
    }

    deinit {
        daemon.terminate()
        try? FileManager.default.removeItem(atPath: directory)
    }
}
