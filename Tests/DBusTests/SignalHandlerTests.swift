import DBus
import Synchronization
import Testing
import TestSupport

/// `subscribe(matching:onSignals:onEnd:)`: signals handed to a closure on the connection's thread.
@Suite("Signal handlers")
struct SignalHandlerTests {
    @Test func aHandlerGetsTheMatchingSignalsInOrderUntilCancelled() async throws {
        let fixture = try BusFixture()
        let sender = try await fixture.connect("sender")
        let receiver = try await fixture.connect("receiver")
        let (ticks, tickSink) = AsyncStream<UInt32>.makeStream()
        let ended = Mutex(false)
        let subscription = try await receiver.subscribe(
            matching: MatchRule(interface: TestService.interface, member: "Tick"),
            onSignals: { batch in
                for signal in batch { if let count = try? signal.body.decode(UInt32.self, at: 0) { tickSink.yield(count) } }
            },
            onEnd: { _ in ended.withLock { $0 = true } })
        // A plain stream on the same connection: a signal sent after the others arrives after them.
        let tocks = try await receiver.signals(matching: MatchRule(interface: TestService.interface, member: "Tock"))
        func send(_ member: String, _ count: UInt32) async throws {
            try await sender.emitSignal(path: TestService.path, interface: TestService.interface, member: member, [.uint32(count)])
        }
        for count in 1...5 { try await send("Tick", UInt32(count)) }
        let received = try await withTimeout(.seconds(5), "five ticks") {
            var counts: [UInt32] = []
            for await count in ticks {
                counts.append(count)
                if counts.count == 5 { break }
            }
            return counts
        }
        #expect(received == [1, 2, 3, 4, 5])

        await subscription.cancel()
        try await send("Tick", 6)
        try await send("Tock", 7)
        _ = try await tocks.first(within: .seconds(5), "the tock sent after the last tick") { _ in true }
        tickSink.finish()
        var after: [UInt32] = []
        for await count in ticks { after.append(count) }
        #expect(after.isEmpty, "a cancelled handler hears nothing more")
        #expect(!ended.withLock { $0 }, "cancelling is not an end of the connection")
        await sender.close()
        await receiver.close()
    }

    @Test func aHandlerHearsOnceWhenTheConnectionIsLost() async throws {
        let fixture = try BusFixture()
        let receiver = try await fixture.connect("receiver")
        let (ends, endSink) = AsyncStream<String>.makeStream()
        _ = try await receiver.subscribe(
            matching: MatchRule(interface: TestService.interface), onSignals: { _ in },
            onEnd: { error in endSink.yield("\(error)") })
        fixture.bus.stop()
        let reason = try await ends.first(within: .seconds(10), "the end of the subscription") { _ in true }
        #expect(reason.contains("Disconnected") || reason.contains("disconnected"))
        endSink.finish()
        var more = 0
        for await _ in ends { more += 1 }
        #expect(more == 0, "onEnd is called once")
    }
}
