import DBus
import Testing
import TestSupport

@Suite("Timeouts, cancellation and vanishing peers: no call hangs")
struct FailureModeTests {
    let fixture: BusFixture
    let server: DBusConnection
    let client: DBusConnection

    init() async throws {
        fixture = try BusFixture()
        server = try await fixture.connect("server")
        client = try await fixture.connect("client")
        try await TestService.export(on: server)
    }

    /// The server answers after 20 s; the caller gave up after 200 ms. NoReply shows that the
    /// call's own timer ended it (a late reply would have been a success). No duration is
    /// asserted: on two loaded cores the 200 ms timer was seen to fire after 3.03 s.
    @Test func aCallTimesOutWithNoReply() async throws {
        await #expect {
            try await client.callTest(server, "Sleep", [.uint32(20_000)], timeout: .milliseconds(200))
        } throws: { ($0 as? DBusError)?.name == DBusError.noReply }
    }

    @Test func cancellingTheCallingTaskCancelsTheCall() async throws {
        let client = self.client
        let server = self.server
        let call = Task { try await client.callTest(server, "Sleep", [.uint32(10_000)], timeout: .seconds(30)) }
        // Cancel once the call is surely in flight: the server has received it when Ping after it returns.
        _ = try await client.call(destination: server.uniqueName, path: "/", interface: "org.freedesktop.DBus.Peer", member: "Ping")
        call.cancel()
        let result = try await withTimeout(.seconds(5), "the cancelled call to end") { await call.result }
        #expect(throws: CancellationError.self) { try result.get() }
    }

    @Test func aPeerThatDisconnectsWithoutReplyingFailsThePendingCallPromptly() async throws {
        let client = self.client
        let server = self.server
        let call = Task { try await client.callTest(server, "Sleep", [.uint32(20_000)], timeout: .seconds(30)) }
        _ = try await client.call(destination: server.uniqueName, path: "/", interface: "org.freedesktop.DBus.Peer", member: "Ping")
        await server.close()
        let result = try await withTimeout(.seconds(5), "the orphaned call to fail") { await call.result }
        #expect { try result.get() } throws: { ($0 as? DBusError)?.name == DBusError.noReply }
    }

    @Test func losingTheBusFailsCallsFinishesStreamsAndWakesWaiters() async throws {
        let client = self.client
        let server = self.server
        let stream = try await client.signals(matching: MatchRule(member: "Tick"))
        let call = Task { try await client.callTest(server, "Sleep", [.uint32(20_000)], timeout: .seconds(30)) }
        _ = try await client.call(destination: server.uniqueName, path: "/", interface: "org.freedesktop.DBus.Peer", member: "Ping")
        fixture.bus.stop()
        try await withTimeout(.seconds(5), "the disconnect") { await client.waitUntilDisconnected() }
        #expect(await client.isConnected == false)
        let result = try await withTimeout(.seconds(5), "the pending call to fail") { await call.result }
        #expect(throws: DBusError.self) { try result.get() }
        await #expect { try await withTimeout(.seconds(5), "the stream to end") { for try await _ in stream {} } } throws: {
            ($0 as? DBusError)?.name == DBusError.disconnected
        }
        await #expect { try await client.callTest(server, "Add", [.int32(1), .int32(2)]) } throws: {
            ($0 as? DBusError)?.name == DBusError.disconnected
        }
    }

    @Test func callingANameNobodyOwnsFailsWithServiceUnknown() async throws {
        await #expect {
            try await client.call(destination: "com.example.Nobody", path: "/", interface: "com.example.X", member: "Y")
        } throws: { ($0 as? DBusError)?.name == DBusError.serviceUnknown }
    }
}
