import Foundation

/// A dbus-daemon of our own, on a socket in a fresh temporary directory: tests, benchmarks and
/// the demo never touch the machine's buses.
///
/// The daemon runs until `stop()` or until this object is released.
public final class PrivateBus: Sendable {
    public let address: String
    public let directory: URL
    private let process: ChildProcess

    /// Starts the daemon and returns once it printed its address (it is listening by then).
    public init() throws {
        directory = FileManager.default.temporaryDirectory.appendingPathComponent("wearfleet-bus-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        let configURL = directory.appendingPathComponent("bus.conf")
        let socket = directory.appendingPathComponent("bus.socket").path
        try Self.configuration(socketPath: socket).write(to: configURL, atomically: true, encoding: .utf8)

        // Running as root, dbus-daemon warns on stderr that it cannot raise its fd limit; keep
        // its chatter in the bus directory rather than in the test log.
        process = try ChildProcess(
            "/usr/bin/dbus-daemon", ["--config-file=\(configURL.path)", "--nofork", "--print-address=1"],
            stderrPath: directory.appendingPathComponent("bus.log").path)
        // The first line on stdout is the address: reading it is how we know the bus is up.
        let printed = (try? process.readLine(within: 10)) ?? ""
        guard printed.hasPrefix("unix:") else {
            process.terminate()
            try? FileManager.default.removeItem(at: directory)
            throw PrivateBusError.didNotStart(printed)
        }
        address = printed
    }

    /// A minimal session-like bus: anyone on this machine may connect and own any name.
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
          <limit name="max_match_rules_per_connection">50000</limit>
          <limit name="reply_timeout">300000</limit>
        </busconfig>
        """
    }

    public var pid: Int32 { process.pid }

    /// Stops the daemon (every connection to it sees the bus vanish) and removes its directory.
    public func stop() {
        process.terminate()
        try? FileManager.default.removeItem(at: directory)
    }

    deinit { stop() }
}

public enum PrivateBusError: Error, CustomStringConvertible {
    case didNotStart(String)
    public var description: String {
        switch self {
        case .didNotStart(let output): return "dbus-daemon did not start (printed: \(output))"
        }
    }
}
