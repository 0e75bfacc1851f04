import DBus
import Testing
import TestSupport

/// `DBusObjectPathDictionary`: keyed by object path, and looked up with a received message's own
/// path bytes inside a claim.
@Suite("Object path dictionaries")
struct ObjectPathDictionaryTests {
    @Test func storesReplacesAndRemovesByPath() {
        var dictionary = DBusObjectPathDictionary<Int>()
        dictionary["/a"] = 1
        dictionary["/a/b"] = 2
        dictionary["/a"] = 3
        #expect(dictionary["/a"] == 3)
        #expect(dictionary["/a/b"] == 2)
        #expect(dictionary["/a/c"] == nil)
        #expect(dictionary.count == 2)
        dictionary["/a/b"] = nil
        #expect(dictionary.count == 1)
        dictionary.removeAll()
        #expect(dictionary.isEmpty)
    }

    @Test func aMessagesPathIsLookedUpInPlace() async throws {
        var known = DBusObjectPathDictionary<String>()
        // Paths that share prefixes, lengths and 8-byte blocks with the one looked up.
        known["/com/example/sensor"] = "the sensor"
        known["/com/example/sensor/0"] = "below it"
        known["/com/example/sensos"] = "same length"
        known["/com/example"] = "above it"
        let table = known
        let fixture = try await ClaimFixture { message in
            table.value(forPathOf: message) ?? "unknown"
        }
        let other: DBusObjectPath = "/com/example/sensor/1"
        try await fixture.send([
            .signal(path: ClaimFixture.path, interface: ClaimFixture.interface, member: "Reading"),
            .signal(path: other, interface: ClaimFixture.interface, member: "Reading"),
        ])
        // The second signal is on another path: the fixture's subscription never sees it.
        #expect(try await fixture.finish() == [.claimed("the sensor")])
        await fixture.close()

        let wide = try await ClaimFixture(under: "/com") { message in table.value(forPathOf: message) ?? "unknown" }
        try await wide.send([
            .signal(path: other, interface: ClaimFixture.interface, member: "Reading"),
            .signal(path: "/com/example/sensor/0", interface: ClaimFixture.interface, member: "Reading"),
        ])
        #expect(try await wide.finish() == [.claimed("unknown"), .claimed("below it")])
        await wide.close()
    }
}
