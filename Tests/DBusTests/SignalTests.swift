import DBus
import Testing
import TestSupport

@Suite("Signal subscriptions")
struct SignalTests {
    let fixture: BusFixture
    let sender: DBusConnection
    let receiver: DBusConnection

    init() async throws {
        fixture = try BusFixture()
        sender = try await fixture.connect("sender")
        receiver = try await fixture.connect("receiver")
    }

    func tick(_ count: UInt32, path: DBusObjectPath = TestService.path, member: String = "Tick") async throws {
        try await sender.emitSignal(path: path, interface: TestService.interface, member: member, [.uint32(count)])
    }

    @Test func aSubscriptionReceivesTheSignalsItMatchesInOrder() async throws {
        let stream = try await receiver.signals(matching: MatchRule(interface: TestService.interface, member: "Tick"))
        for count in 1...5 { try await tick(UInt32(count)) }
        let received = try await withTimeout(.seconds(5), "five ticks") {
            var counts: [UInt32] = []
            for try await signal in stream {
                counts.append(try signal.body.decode(UInt32.self, at: 0))
                if counts.count == 5 { break }
            }
            return counts
        }
        #expect(received == [1, 2, 3, 4, 5])
    }

    @Test func signalsThatDoNotMatchAreNotDelivered() async throws {
        // Two subscriptions on one connection: each gets only its own signals.
        let ticks = try await receiver.signals(matching: MatchRule(path: TestService.path, interface: TestService.interface, member: "Tick"))
        let tocks = try await receiver.signals(matching: MatchRule(interface: TestService.interface, member: "Tock"))
        try await tick(1, path: "/other/path")
        try await tick(2, member: "Tock")
        try await tick(3)
        let firstTick = try await ticks.first(within: .seconds(5)) { _ in true }
        #expect(try firstTick.body.decode(UInt32.self, at: 0) == 3)
        let firstTock = try await tocks.first(within: .seconds(5)) { _ in true }
        #expect(try firstTock.body.decode(UInt32.self, at: 0) == 2)
    }

    @Test func pathNamespaceMatchesThePathAndEverythingBelow() async throws {
        let stream = try await receiver.signals(matching: MatchRule(pathNamespace: "/com/example", member: "Tick"))
        try await tick(1, path: "/com/examples")
        try await tick(2, path: "/com/example/test/deeper")
        let signal = try await stream.first(within: .seconds(5)) { _ in true }
        #expect(try signal.body.decode(UInt32.self, at: 0) == 2)
    }

    @Test func arg0FiltersOnTheFirstArgument() async throws {
        let stream = try await receiver.signals(matching: MatchRule(
            interface: "org.freedesktop.DBus.Properties", member: "PropertiesChanged", arg0: "org.bluez.Device1"))
        for interface in ["org.bluez.Adapter1", "org.bluez.Device1"] {
            try await sender.emitSignal(
                path: TestService.path, interface: "org.freedesktop.DBus.Properties", member: "PropertiesChanged",
                [.string(interface), .stringVariantMap(["RSSI": .int16(-50)]), .stringArray([])])
        }
        let signal = try await stream.first(within: .seconds(5)) { _ in true }
        #expect(try signal.body.decode(String.self, at: 0) == "org.bluez.Device1")
    }

    @Test func aWellKnownSenderMatchesOnlyItsCurrentOwner() async throws {
        let impostor = try await fixture.connect("impostor")
        try await requestName("com.example.Service", on: sender)
        let stream = try await receiver.signals(matching: MatchRule(sender: "com.example.Service", member: "Tick"))
        try await impostor.emitSignal(path: TestService.path, interface: TestService.interface, member: "Tick", [.uint32(1)])
        try await tick(2)
        let signal = try await stream.first(within: .seconds(5)) { _ in true }
        #expect(signal.sender == sender.uniqueName)
        #expect(try signal.body.decode(UInt32.self, at: 0) == 2)
    }

    @Test func endingTheIterationRemovesTheSubscription() async throws {
        var stream: AsyncThrowingStream<DBusMessage, any Error>? = try await receiver.signals(
            matching: MatchRule(member: "Tick"))
        _ = stream
        stream = nil
        // The rule is removed asynchronously; a fresh subscription still works afterwards.
        let fresh = try await receiver.signals(matching: MatchRule(member: "Tick"))
        try await tick(7)
        let signal = try await fresh.first(within: .seconds(5)) { _ in true }
        #expect(try signal.body.decode(UInt32.self, at: 0) == 7)
    }
}

/// Requests a well-known name, failing the test if the bus does not make us its primary owner.
func requestName(_ name: String, on connection: DBusConnection) async throws {
    let reply = try await connection.call(
        destination: busDaemon, path: busPath, interface: busDaemon, member: "RequestName", [.string(name), .uint32(4)])
    #expect(try reply.decode(UInt32.self, at: 0) == 1, "primary owner")
}

@Suite("Batched signal delivery")
struct SignalBatchTests {
    @Test func batchesDeliverEverySignalOnceInOrder() async throws {
        let fixture = try BusFixture()
        let sender = try await fixture.connect("sender")
        let receiver = try await fixture.connect("receiver")
        let batches = try await receiver.signalBatches(matching: MatchRule(interface: TestService.interface, member: "Tick"))
        for count in 1...200 {
            try await sender.emitSignal(path: TestService.path, interface: TestService.interface, member: "Tick", [.uint32(UInt32(count))])
        }
        let received = try await withTimeout(.seconds(5), "200 ticks in batches") {
            var counts: [UInt32] = []
            for try await batch in batches {
                #expect(!batch.isEmpty)
                for signal in batch { counts.append(try signal.body.decode(UInt32.self, at: 0)) }
                if counts.count >= 200 { break }
            }
            return counts
        }
        #expect(received == Array(1...200))
    }
}
