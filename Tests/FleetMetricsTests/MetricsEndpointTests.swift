import FleetMetrics
import Foundation
import Glibc
import Testing
import TestSupport

/// The HTTP endpoint on real loopback sockets (port 0 everywhere).
@Suite("The metrics endpoint")
struct MetricsEndpointTests {
    static let body = "# TYPE up gauge\nup 1\n"
    /// Renders run as tasks: in a full test run the pool may be busy long enough to pass the
    /// default 10 s response deadline, which these tests are not about.
    static let patient = MetricsEndpoint.Limits(responseTimeout: .seconds(120))

    func endpoint(host: String = "127.0.0.1", limits: MetricsEndpoint.Limits = patient) throws -> MetricsEndpoint {
        try MetricsEndpoint(host: host, port: 0, limits: limits) { Array(Self.body.utf8) }
    }

    @Test func getMetricsServesTheExpositionAndClosesTheConnection() async throws {
        let endpoint = try endpoint()
        defer { endpoint.stop() }
        #expect(endpoint.port > 0)
        #expect(endpoint.address == "127.0.0.1:\(endpoint.port)")
        #expect(endpoint.isLoopback)
        let reply = try await HTTPTestClient.get("/metrics", port: endpoint.port)
        #expect(reply.status == 200)
        #expect(reply.headers["content-type"] == "text/plain; version=0.0.4; charset=utf-8")
        #expect(reply.headers["content-length"] == "\(Self.body.utf8.count)")
        #expect(reply.headers["connection"] == "close")
        #expect(reply.body == Self.body)
    }

    @Test func headHasTheHeadOfGetAndNoBody() async throws {
        let endpoint = try endpoint()
        defer { endpoint.stop() }
        let reply = try await HTTPTestClient.exchange("HEAD /metrics HTTP/1.1\r\nHost: t\r\n\r\n", port: endpoint.port)
        #expect(reply.status == 200)
        #expect(reply.headers["content-length"] == "\(Self.body.utf8.count)")
        #expect(reply.body.isEmpty)
    }

    @Test func theRootPointsToMetrics() async throws {
        let endpoint = try endpoint()
        defer { endpoint.stop() }
        let reply = try await HTTPTestClient.get("/", port: endpoint.port)
        #expect(reply.status == 200)
        #expect(reply.headers["content-type"]?.hasPrefix("text/html") == true)
        #expect(reply.body.contains("href=\"/metrics\""))
    }

    @Test func otherPathsAre404AndOtherMethods405() async throws {
        let endpoint = try endpoint()
        defer { endpoint.stop() }
        #expect(try await HTTPTestClient.get("/metricsx", port: endpoint.port).status == 404)
        let post = try await HTTPTestClient.exchange(
            "POST /metrics HTTP/1.1\r\nHost: t\r\nContent-Length: 5\r\n\r\nhello", port: endpoint.port)
        #expect(post.status == 405)
        #expect(post.headers["allow"] == "GET, HEAD")
        #expect(try await HTTPTestClient.exchange("BREW / HTTP/1.1\r\n\r\n", port: endpoint.port).status == 405)
        #expect(try await HTTPTestClient.exchange("GET /metrics SPDY/3\r\n\r\n", port: endpoint.port).status == 400)
    }

    @Test func ipv6Loopback() async throws {
        let endpoint = try endpoint(host: "::1")
        defer { endpoint.stop() }
        #expect(endpoint.address == "[::1]:\(endpoint.port)")
        #expect(endpoint.isLoopback)
        let reply = try await HTTPTestClient.get("/metrics", host: "::1", port: endpoint.port)
        #expect(reply.status == 200)
        #expect(reply.body == Self.body)
    }

    @Test func anOversizedRequestIsRejectedWith431() async throws {
        let endpoint = try endpoint(limits: .init(maxRequestBytes: 1024, responseTimeout: .seconds(120)))
        defer { endpoint.stop() }
        let huge = "GET /metrics HTTP/1.1\r\nX-Filler: \(String(repeating: "a", count: 4000))\r\n\r\n"
        let reply = try await HTTPTestClient.exchange(huge, port: endpoint.port)
        #expect(reply.status == 431)
        #expect(try await HTTPTestClient.get("/metrics", port: endpoint.port).status == 200)
    }

    @Test func aSlowClientDoesNotHoldUpAnotherScrape() async throws {
        let endpoint = try endpoint(limits: .init(requestTimeout: .seconds(600), responseTimeout: .seconds(120)))
        defer { endpoint.stop() }
        // Half a request line, then nothing.
        let slow = try HTTPTestClient.connect(host: "127.0.0.1", port: endpoint.port)
        defer { close(slow) }
        try HTTPTestClient.send(slow, Array("GET /metr".utf8))
        let reply = try await HTTPTestClient.get("/metrics", port: endpoint.port)
        #expect(reply.status == 200)
        // Served while the slow client is still waiting: it has had neither an answer nor a close.
        var byte: UInt8 = 0
        let pending = recv(slow, &byte, 1, Int32(MSG_DONTWAIT))
        #expect(pending < 0 && (errno == EAGAIN || errno == EWOULDBLOCK), "the slow connection was answered or closed first")
    }

    @Test func aSlowClientIsAnswered408AtItsDeadline() async throws {
        let endpoint = try endpoint(limits: .init(requestTimeout: .milliseconds(300)))
        defer { endpoint.stop() }
        // Timed on the client's thread: the endpoint's deadline does not depend on the task pool.
        let (reply, elapsed) = try await HTTPTestClient.onThread {
            let started = ContinuousClock.now
            let slow = try HTTPTestClient.connect(host: "127.0.0.1", port: endpoint.port)
            defer { close(slow) }
            try HTTPTestClient.send(slow, Array("GET /metrics HTTP/1.1\r\nHost: t\r\n".utf8))  // no empty line: never complete
            return (try HTTPTestClient.parse(HTTPTestClient.readAll(slow)), ContinuousClock.now - started)
        }
        // 408 is the deadline's answer (the request never completes); it did not come early.
        // No upper bound: a loaded machine may be late, and that is no defect of the endpoint.
        #expect(reply.status == 408)
        #expect(elapsed >= .milliseconds(300))
    }

    @Test func idleConnectionsCannotTakeEverySlot() async throws {
        let endpoint = try endpoint(limits: .init(responseTimeout: .seconds(120), maxConnections: 3))
        defer { endpoint.stop() }
        var idle: [Int32] = []
        defer { for fd in idle { close(fd) } }
        for _ in 0..<6 { idle.append(try HTTPTestClient.connect(host: "127.0.0.1", port: endpoint.port)) }
        let reply = try await HTTPTestClient.get("/metrics", port: endpoint.port)
        #expect(reply.status == 200)
    }

    @Test func aPortInUseIsAnErrorNamingTheAddress() throws {
        let first = try endpoint()
        defer { first.stop() }
        let error = #expect(throws: MetricsEndpointError.self) {
            _ = try MetricsEndpoint(host: "127.0.0.1", port: first.port) { [] }
        }
        #expect(error?.errorCode == EADDRINUSE)
        #expect(error?.description == "cannot listen on 127.0.0.1:\(first.port): bind failed: Address already in use")
    }

    @Test func anUnresolvableHostIsAnError() throws {
        #expect(throws: MetricsEndpointError.self) {
            _ = try MetricsEndpoint(host: "no such host.invalid", port: 0) { [] }
        }
    }

    /// The listening socket itself is gone once `stop` returns. (Asked of the kernel's socket
    /// table by the socket's inode, not by connecting to the port: in a full test run another
    /// test's broker or endpoint may be given the port the moment it is free, and a connection
    /// would then reach it — seen once, beside `stress-ng`.)
    @Test func stopClosesTheListener() async throws {
        let endpoint = try endpoint()
        let listening = try Self.listeningSockets(port: endpoint.port)
        #expect(listening.count == 1, "the endpoint's own listener, before the stop")
        let inode = try #require(listening.first)
        endpoint.stop()
        endpoint.stop()  // idempotent
        #expect(try !Self.listeningSockets().contains(inode), "socket inode \(inode) still listening after stop")
    }

    /// The inodes of the TCP sockets listening (state 0A) on `port` (any, when nil), from
    /// /proc/net/tcp and tcp6.
    static func listeningSockets(port: Int? = nil) throws -> Set<String> {
        var inodes: Set<String> = []
        for table in ["/proc/net/tcp", "/proc/net/tcp6"] {
            guard let text = procFile(table) else { continue }
            for line in text.split(separator: "\n").dropFirst() {
                let fields = line.split(separator: " ", omittingEmptySubsequences: true)
                guard fields.count > 9, fields[3] == "0A" else { continue }
                if let port {
                    guard let local = fields[1].split(separator: ":").last, Int(local, radix: 16) == port else { continue }
                }
                inodes.insert(String(fields[9]))
            }
        }
        return inodes
    }

    @Test func aRenderThatOutlivesTheResponseDeadlineClosesTheConnection() async throws {
        let endpoint = try MetricsEndpoint(host: "127.0.0.1", port: 0, limits: .init(responseTimeout: .milliseconds(300))) {
            try? await Task.sleep(for: .seconds(30))
            return []
        }
        defer { endpoint.stop() }
        let (received, elapsed) = try await HTTPTestClient.onThread {
            let started = ContinuousClock.now
            let fd = try HTTPTestClient.connect(host: "127.0.0.1", port: endpoint.port)
            defer { close(fd) }
            try HTTPTestClient.send(fd, Array("GET /metrics HTTP/1.1\r\n\r\n".utf8))
            return (try HTTPTestClient.readAll(fd), ContinuousClock.now - started)
        }
        // Closed without a response: the render would have answered after 30 s.
        #expect(received.isEmpty, "closed without a response")
        #expect(elapsed >= .milliseconds(300))
    }
}
