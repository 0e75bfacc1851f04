import Foundation
import Glibc
import Synchronization

/// A mosquitto broker of our own on a free loopback port, from a configuration written to a fresh
/// temporary directory: the MQTT tests and the benchmark never touch the machine's broker service.
///
/// Started in the foreground with its log on stderr (unbuffered, unlike its stdout); the broker
/// says `running` once its listeners are open, which is how `init` and `restart()` know it is
/// listening. Runs until `stop()` or until this object is released.
public final class PrivateBroker: Sendable {
    public let port: Int
    public let directory: URL
    /// Extra configuration lines (TLS listener settings, password file, …).
    private let extraConfiguration: String
    private let process: Mutex<ChildProcess?>

    /// - Parameter configuration: lines added to the listener's (written after `listener`).
    public init(port: Int? = nil, configuration: String = "allow_anonymous true") throws {
        directory = FileManager.default.temporaryDirectory.appendingPathComponent("wearfleet-broker-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        self.port = try port ?? Self.freeLoopbackPort()
        extraConfiguration = configuration
        process = Mutex(nil)
        try start()
    }

    deinit {
        stop()
        try? FileManager.default.removeItem(at: directory)
    }

    public var pid: Int32? { process.withLock { $0?.pid } }
    public var url: String { "mqtt://127.0.0.1:\(port)" }

    /// Starts the broker again on the same port (after `stop()`): what it retained is gone, as
    /// after a restart without persistence.
    public func restart() throws {
        stop()
        try start()
    }

    /// Stops the broker (SIGTERM, then SIGKILL after 2 s).
    public func stop() {
        let running = process.withLock { process in
            defer { process = nil }
            return process
        }
        running?.terminate()
    }

    private func start() throws {
        let configURL = directory.appendingPathComponent("mosquitto.conf")
        // As root, mosquitto would switch to its own user and could not read the test's files.
        let user = getuid() == 0 ? "user root\n" : ""
        let text = """
            \(user)persistence false
            log_dest stderr
            log_type error
            log_type warning
            log_type notice
            log_type information
            listener \(port) 127.0.0.1
            \(extraConfiguration)

            """
        try text.write(to: configURL, atomically: true, encoding: .utf8)
        let child = try ChildProcess("/usr/sbin/mosquitto", ["-c", configURL.path], mergeStderr: true)
        var seen: [String] = []
        while true {
            guard let line = try? child.readLine(within: 10) else {
                child.terminate()
                throw PrivateBrokerError.didNotStart(seen.suffix(5).joined(separator: "\n"))
            }
            seen.append(line)
            if line.hasSuffix(" running") { break }
        }
        process.withLock { $0 = child }
    }

    /// A port on 127.0.0.1 that nothing listens on right now (bound, read back, released).
    public static func freeLoopbackPort() throws -> Int {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard fd >= 0 else { throw PrivateBrokerError.noPort(errno) }
        defer { close(fd) }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        address.sin_port = 0
        let bound = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
        }
        guard bound == 0 else { throw PrivateBrokerError.noPort(errno) }
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        let named = withUnsafeMutablePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(fd, $0, &length) }
        }
        guard named == 0 else { throw PrivateBrokerError.noPort(errno) }
        return Int(UInt16(bigEndian: address.sin_port))
    }
}

public enum PrivateBrokerError: Error, CustomStringConvertible {
    case didNotStart(String)
    case noPort(Int32)

    public var description: String {
        switch self {
        case .didNotStart(let output): "mosquitto did not start:\n\(output)"
        case .noPort(let code): "no free loopback port: errno \(code)"
        }
    }
}
