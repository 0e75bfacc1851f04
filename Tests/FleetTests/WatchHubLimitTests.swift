import Fleet
import Glibc
import Logging
import Testing
import TestSupport

/// What `WatchHub` refuses and how a client that breaks the protocol ends.
@Suite("The watch hub's limits")
struct WatchHubLimitTests {
    static func hub() throws -> WatchHub {
        try WatchHub(pipeline: ValuePipeline(logger: Logger(label: "watch-hub-test") { _ in SwiftLogNoOpLogHandler() }))
    }

    @Test func clientsBeyondTheLimitAreRefusedAndAClosedOneMakesRoom() async throws {
        let hub = try Self.hub()
        defer { hub.stop() }
        var sockets: [Int32] = []
        defer { for socket in sockets { close(socket) } }
        for _ in 0..<WatchHub.clientLimit { sockets.append(try hub.addClient(WatchFilter()).socket) }
        #expect(throws: WatchHubError.tooManyClients(limit: WatchHub.clientLimit)) { _ = try hub.addClient(WatchFilter()) }
        #expect(hub.clientCount == WatchHub.clientLimit)

        // A client that hangs up frees its place (the writer sees the hang-up).
        close(sockets.removeLast())
        try await Self.clientCount(of: hub, goesFrom: WatchHub.clientLimit, to: WatchHub.clientLimit - 1)
        sockets.append(try hub.addClient(WatchFilter()).socket)
    }

    @Test func aClientThatWritesIsEnded() async throws {
        let hub = try Self.hub()
        defer { hub.stop() }
        let socket = try hub.addClient(WatchFilter()).socket
        defer { close(socket) }
        var byte: UInt8 = 1
        #expect(send(socket, &byte, 1, 0) == 1)
        try await Self.clientCount(of: hub, goesFrom: 1, to: 0)
        // Its socket reads end of file: the daemon closed its end.
        var buffer = [UInt8](repeating: 0, count: 16)
        #expect(recv(socket, &buffer, buffer.count, 0) == 0)
    }

    /// Waits (at most 5 s) until the hub, having reported `earlier` clients, reports `later` (it
    /// reports every change; what it reported before `earlier` may still be buffered).
    static func clientCount(of hub: WatchHub, goesFrom earlier: Int, to later: Int) async throws {
        try await withTimeout(.seconds(5), "the hub to count \(later) clients after \(earlier)") {
            var sawEarlier = false
            for await reported in hub.clientCounts {
                if reported == earlier { sawEarlier = true } else if sawEarlier, reported == later { return }
            }
        }
    }
}
