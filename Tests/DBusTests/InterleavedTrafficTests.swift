import DBus
import Testing
import TestSupport

/// One connection that at the same time receives a stream of signals, serves method calls and
/// waits for replies to its own calls: signals are taken off libdbus's queue directly, everything
/// else goes through libdbus's dispatch (`dispatchIncoming`), and none of the three may be lost,
/// reordered within its kind or held up by the others.
@Suite("Signals, method calls and replies interleaved on one connection")
struct InterleavedTrafficTests {
    @Test func nothingIsLostOrReorderedWhenSignalsCallsAndRepliesInterleave() async throws {
        let fixture = try BusFixture()
        let busy = try await fixture.connect("busy")
        let peer = try await fixture.connect("peer")
        try await TestService.export(on: busy)
        try await TestService.export(on: peer)
        let ticks = try await busy.signals(matching: MatchRule(sender: peer.uniqueName, interface: TestService.interface, member: "Tick"))
        let signalCount = 400
        let callCount = 60

        let received = Task {
            var counts: [UInt32] = []
            for try await signal in ticks {
                counts.append(try signal.body.decode(UInt32.self, at: 0))
                if counts.count == signalCount { break }
            }
            return counts
        }
        try await withTimeout(.seconds(30), "signals, calls and replies") {
            try await withThrowingTaskGroup(of: Void.self) { group in
                // The peer streams signals to `busy`...
                group.addTask {
                    for count in 1...signalCount {
                        try await peer.emitSignal(path: TestService.path, interface: TestService.interface, member: "Tick", [.uint32(UInt32(count))])
                    }
                }
                // ...and calls it meanwhile (method calls arriving between the signals)...
                group.addTask {
                    for index in 0..<callCount {
                        let reply = try await peer.callTest(busy, "Add", [.int32(Int32(index)), .int32(1)])
                        #expect(try reply.decode(Int32.self, at: 0) == Int32(index) + 1)
                    }
                }
                // ...while `busy` calls the peer (replies arriving between the signals).
                group.addTask {
                    for index in 0..<callCount {
                        let reply = try await busy.callTest(peer, "Add", [.int32(Int32(index)), .int32(2)])
                        #expect(try reply.decode(Int32.self, at: 0) == Int32(index) + 2)
                    }
                }
                try await group.waitForAll()
            }
        }
        let counts = try await withTimeout(.seconds(10), "every signal") { try await received.value }
        #expect(counts == (1...signalCount).map(UInt32.init))
        await busy.close()
        await peer.close()
    }
}
