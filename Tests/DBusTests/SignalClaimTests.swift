import DBus
import Synchronization
import Testing
import TestSupport

/// `subscribe(matching:claim:onSignals:onEnd:)`: a claim reads matching signals in place, before
/// they are decoded, and takes the ones it wants; everything else arrives decoded, unchanged and
/// in order.
@Suite("Signal claims")
struct SignalClaimTests {
    @Test(arguments: [0, 1, 20, 244, 4096])
    func aValueOnlyChangeIsClaimedWithItsBytes(size: Int) async throws {
        let fixture = try await ClaimFixture(claim: claimValueOnlyChange)
        let bytes = (0..<size).map { UInt8(truncatingIfNeeded: $0 &* 7 &+ 3) }
        try await fixture.send([ClaimFixture.propertiesChanged(["Value": .bytes(bytes)])])
        let seen = try await fixture.finish()
        #expect(seen == [.claimed("\(bytes)")])
        #expect(await fixture.receiver.claimedSignals == 1)
        #expect(await fixture.receiver.undecodableMessages == 0)
        await fixture.close()
    }

    /// Signals that look like a value-only change but are not: the claim must leave each one,
    /// and it must arrive decoded exactly as sent.
    enum NearMiss: String, CaseIterable, Sendable {
        case twoEntries, valueNotBytes, valueArrayOfInt32, keyNotValue, noEntries, invalidatedNotEmpty
        case otherInterface, noInvalidatedList, extraArgument, dictionaryOfStrings, otherMember

        var signal: DBusMessage {
            switch self {
            case .twoEntries: return ClaimFixture.propertiesChanged(["Value": .bytes([1, 2]), "Notifying": .boolean(true)])
            case .valueNotBytes: return ClaimFixture.propertiesChanged(["Value": .string("1, 2")])
            case .valueArrayOfInt32: return ClaimFixture.propertiesChanged(["Value": .array(element: .int32, [.int32(1)])])
            case .keyNotValue: return ClaimFixture.propertiesChanged(["Data": .bytes([1, 2])])
            case .noEntries: return ClaimFixture.propertiesChanged([:], invalidated: ["Value"])
            case .invalidatedNotEmpty: return ClaimFixture.propertiesChanged(["Value": .bytes([1, 2])], invalidated: ["Notifying"])
            case .otherInterface: return ClaimFixture.propertiesChanged(["Value": .bytes([1, 2])], of: "com.example.Other1")
            case .noInvalidatedList:
                return body([.string(ClaimFixture.interface), .stringVariantMap(["Value": .bytes([1, 2])])])
            case .extraArgument:
                return body([.string(ClaimFixture.interface), .stringVariantMap(["Value": .bytes([1, 2])]), .stringArray([]), .uint32(1)])
            case .dictionaryOfStrings:
                let changed = DBusValue.dictionary(key: .string, value: .string, [DBusDictEntry(key: .string("Value"), value: .string("x"))])
                return body([.string(ClaimFixture.interface), changed, .stringArray([])])
            case .otherMember:
                return .signal(
                    path: ClaimFixture.path, interface: ClaimFixture.properties, member: "PropertiesChanging",
                    body: [.string(ClaimFixture.interface), .stringVariantMap(["Value": .bytes([1, 2])]), .stringArray([])])
            }
        }

        private func body(_ values: [DBusValue]) -> DBusMessage {
            .signal(path: ClaimFixture.path, interface: ClaimFixture.properties, member: "PropertiesChanged", body: values)
        }
    }

    @Test(arguments: NearMiss.allCases)
    func aNearMissIsLeftToTheNormalDecoding(_ shape: NearMiss) async throws {
        let fixture = try await ClaimFixture(claim: claimValueOnlyChange)
        let signal = shape.signal
        try await fixture.send([signal])
        let seen = try await fixture.finish()
        #expect(seen == [.decoded(member: signal.member ?? "", body: signal.body)])
        #expect(await fixture.receiver.claimedSignals == 0)
        await fixture.close()
    }

    @Test func claimedAndDecodedSignalsKeepTheirArrivalOrder() async throws {
        let fixture = try await ClaimFixture(claim: claimValueOnlyChange)
        func value(_ byte: UInt8) -> DBusMessage { ClaimFixture.propertiesChanged(["Value": .bytes([byte])]) }
        func other(_ level: UInt32) -> DBusMessage { ClaimFixture.propertiesChanged(["Level": .uint32(level)]) }
        let sent = [value(1), other(1), value(2), value(3), other(2), other(3), value(4), other(4)]
        try await fixture.send(sent)
        let seen = try await fixture.finish()
        func decoded(_ signal: DBusMessage) -> ClaimFixture.Entry { .decoded(member: "PropertiesChanged", body: signal.body) }
        #expect(
            seen == [
                .claimed("[1]"), decoded(sent[1]), .claimed("[2]"), .claimed("[3]"), decoded(sent[4]), decoded(sent[5]),
                .claimed("[4]"), decoded(sent[7]),
            ])
        #expect(await fixture.receiver.claimedSignals == 4)
        await fixture.close()
    }

    @Test func aClaimedSignalStillReachesOtherSubscriptionsDecoded() async throws {
        let fixture = try await ClaimFixture(claim: claimValueOnlyChange)
        let (others, otherSink) = AsyncStream<DBusMessage>.makeStream()
        _ = try await fixture.receiver.subscribe(
            matching: MatchRule(interface: ClaimFixture.properties), onSignals: { for signal in $0 { otherSink.yield(signal) } },
            onEnd: { _ in otherSink.finish() })
        let value = ClaimFixture.propertiesChanged(["Value": .bytes([9, 8])])
        let other = ClaimFixture.propertiesChanged(["Level": .uint32(5)])
        try await fixture.send([value, other])
        #expect(try await fixture.finish() == [.claimed("[9, 8]"), .decoded(member: "PropertiesChanged", body: other.body)])
        let both = try await withTimeout(.seconds(5), "both signals at the other subscription") {
            var bodies: [[DBusValue]] = []
            for await signal in others {
                bodies.append(signal.body)
                if bodies.count == 2 { break }
            }
            return bodies
        }
        #expect(both == [value.body, other.body])
        otherSink.finish()
        await fixture.close()
    }

    @Test func theBusNameOwnerChangesAreNeverOffered() async throws {
        let fixture = try BusFixture()
        let receiver = try await fixture.connect("receiver")
        let owner = try await fixture.connect("owner")
        let offered = Mutex(0)
        let (changes, changeSink) = AsyncStream<DBusMessage>.makeStream()
        _ = try await receiver.subscribe(
            matching: MatchRule(sender: busDaemon, member: "NameOwnerChanged", arg0: "com.example.Claimed"),
            claim: { _ in
                offered.withLock { $0 += 1 }
                return true
            },
            onSignals: { for signal in $0 { changeSink.yield(signal) } }, onEnd: { _ in changeSink.finish() })
        let owners = try await receiver.watchNameOwner("com.example.Claimed")
        _ = try await owner.requestName("com.example.Claimed")
        let change = try await changes.first(within: .seconds(5), "NameOwnerChanged, decoded") { _ in true }
        #expect(try change.body.decode(String.self, at: 2) == owner.uniqueName)
        let tracked = try await owners.first(within: .seconds(5), "the name's new owner") { $0 != nil }
        #expect(tracked == owner.uniqueName, "name tracking still sees the change")
        #expect(offered.withLock { $0 } == 0)
        changeSink.finish()
        await owner.close()
        await receiver.close()
    }

    @Test func aCancelledSubscriptionsClaimHearsNothingMore() async throws {
        let fixture = try BusFixture()
        let sender = try await fixture.connect("sender")
        let receiver = try await fixture.connect("receiver")
        let offered = Mutex(0)
        let subscription = try await receiver.subscribe(
            matching: MatchRule(path: ClaimFixture.path),
            claim: { _ in
                offered.withLock { $0 += 1 }
                return true
            },
            onSignals: { _ in }, onEnd: { _ in })
        let (markers, markerSink) = AsyncStream<Void>.makeStream()
        _ = try await receiver.subscribe(
            matching: MatchRule(member: "Marker"), onSignals: { _ in markerSink.yield() }, onEnd: { _ in markerSink.finish() })
        try await sender.sendAll([ClaimFixture.propertiesChanged(["Value": .bytes([1])])])
        try await sender.emitSignal(path: ClaimFixture.path, interface: ClaimFixture.interface, member: "Marker")
        _ = try await markers.first(within: .seconds(5), "the first marker") { true }
        #expect(offered.withLock { $0 } == 2, "the value and the marker were offered")

        await subscription.cancel()
        try await sender.sendAll([ClaimFixture.propertiesChanged(["Value": .bytes([2])])])
        try await sender.emitSignal(path: ClaimFixture.path, interface: ClaimFixture.interface, member: "Marker")
        _ = try await markers.first(within: .seconds(5), "the second marker") { true }
        #expect(offered.withLock { $0 } == 2)
        #expect(await receiver.claimedSignals == 2)
        markerSink.finish()
        await sender.close()
        await receiver.close()
    }
}
