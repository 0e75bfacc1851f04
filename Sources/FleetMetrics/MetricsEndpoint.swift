import DetachedThread
import Dispatch
import FoundationEssentials
import Glibc
import Synchronization

/// A small HTTP/1.1 server for Prometheus scrapes on one address: `GET /metrics` returns the
/// exposition (`text/plain; version=0.0.4`), `GET /` a pointer to it, `HEAD` the same heads,
/// other paths 404, other methods 405. One request per connection (`Connection: close`).
///
/// It runs one thread of its own with a poll loop over non-blocking sockets. Requests are
/// bounded in size (`Limits.maxRequestBytes`, else 431) and time (`requestTimeout`, else 408),
/// responses in time (`responseTimeout`); at most `maxConnections` clients are served at once.
/// `render` runs in a task, never on the loop's thread.
///
/// The socket is bound in `init`, so a port in use is reported there, with the address.
public final class MetricsEndpoint: Sendable {
    public struct Limits: Sendable {
        /// The most a request head (request line and header fields) may be, in bytes.
        public var maxRequestBytes: Int
        /// How long a client has to send its request head, from accepting the connection.
        public var requestTimeout: Duration
        /// How long rendering and sending a response may take.
        public var responseTimeout: Duration
        /// Clients served at once; at capacity the oldest one still sending its request is dropped.
        public var maxConnections: Int

        public init(
            maxRequestBytes: Int = 8 * 1024, requestTimeout: Duration = .seconds(5), responseTimeout: Duration = .seconds(10),
            maxConnections: Int = 32
        ) {
            self.maxRequestBytes = maxRequestBytes
            self.requestTimeout = requestTimeout
            self.responseTimeout = responseTimeout
            self.maxConnections = max(1, maxConnections)
        }
    }

    /// The bound address, numeric: `127.0.0.1:9468`, `[::1]:40123` (port 0 shows the port chosen).
    public let address: String
    /// The bound port.
    public let port: Int
    /// Whether the address accepts connections from this machine only.
    public let isLoopback: Bool

    private let listener: Int32
    private let mailbox: EndpointMailbox
    private let exited = DispatchSemaphore(value: 0)
    private let stopped = Mutex(false)

    /// Binds `host:port` (port 0: any free port) and starts serving.
    public init(
        host: String, port: Int, limits: Limits = Limits(), render: @escaping @Sendable () async -> [UInt8]
    ) throws(MetricsEndpointError) {
        let display = host.contains(":") ? "[\(host)]:\(port)" : "\(host):\(port)"
        let resolved = try ListenAddress.resolve(host: host, port: port)
        let listener = try ListeningSocket.open(resolved, display: display)
        let bound = ListenAddress.bound(to: listener) ?? resolved
        let mailbox: EndpointMailbox
        do {
            mailbox = try EndpointMailbox()
        } catch {
            close(listener)
            throw error
        }
        self.listener = listener
        self.mailbox = mailbox
        self.address = bound.description
        self.port = bound.port
        self.isLoopback = bound.isLoopback
        let exited = self.exited
        do {
            try DetachedThread.start(name: "metrics-http") {
                EndpointLoop(listener: listener, mailbox: mailbox, limits: limits, render: render).run()
                exited.signal()
            }
        } catch {
            // Every property is set, so `deinit` runs `stop()`, which closes the sockets once the
            // loop has exited: no loop will, so say so for it.
            exited.signal()
            throw .socketFailed(address: display, call: "pthread_create", code: error.code)
        }
    }

    /// Stops serving: closes the listening socket and every client connection, and returns
    /// when the loop's thread is done. Renders still running are dropped when they finish.
    public func stop() {
        let first = stopped.withLock { stopped in
            defer { stopped = true }
            return !stopped
        }
        guard first else { return }
        _ = mailbox.stop()
        exited.wait()
        close(listener)
        close(mailbox.readEnd)
    }

    deinit { stop() }
}
