import DBus
import Testing
import TestSupport

@Suite("Exported objects: methods, errors, properties")
struct ExportedObjectTests {
    let fixture: BusFixture
    let server: DBusConnection
    let client: DBusConnection

    init() async throws {
        fixture = try BusFixture()
        server = try await fixture.connect("server")
        client = try await fixture.connect("client")
        try await TestService.export(on: server)
    }

    @Test("Every D-Bus type survives a round trip through a variant", arguments: [
        DBusValue.byte(0xfe), .boolean(true), .boolean(false), .int16(-12345), .uint16(54321), .int32(-7),
        .uint32(4_000_000_000), .int64(.min), .uint64(.max), .double(-0.25), .string("héllo wörld"), .string(""),
        .objectPath("/org/bluez/hci0"), .signature("a{sv}(ii)"),
        .bytes([0, 1, 2, 255]), .bytes([]), .stringArray(["a", "b"]),
        .array(element: .array(.int32), [.array(element: .int32, [.int32(1)]), .array(element: .int32, [])]),
        .stringVariantMap(["RSSI": .int16(-60), "Name": .string("strap"), "UUIDs": .stringArray(["180d"])]),
        .dictionary(key: .uint16, value: .array(.byte), [DBusDictEntry(key: .uint16(0x004c), value: .bytes([1, 2]))]),
        .structure([.int32(1), .string("two"), .variant(.double(3))]),
        .variant(.variant(.string("nested"))),
    ])
    func roundTrip(value: DBusValue) async throws {
        let reply = try await client.callTest(server, "Echo", [.variant(value)])
        #expect(reply == [.variant(value)])
    }

    @Test func syncHandlerComputesAReply() async throws {
        let reply = try await client.callTest(server, "Add", [.int32(40), .int32(2)])
        #expect(try reply.decode(Int32.self, at: 0) == 42)
    }

    @Test func thrownDBusErrorBecomesTheErrorReply() async throws {
        await #expect(throws: TestService.failure) { try await client.callTest(server, "Fail") }
    }

    @Test func wrongArgumentSignatureIsRejectedWithInvalidArgs() async throws {
        await #expect {
            try await client.callTest(server, "Add", [.string("forty"), .int32(2)])
        } throws: { error in
            guard let error = error as? DBusError else { return false }
            return error.name == DBusError.invalidArgs && error.message.contains("'ii'") && error.message.contains("'si'")
        }
    }

    @Test func aHandlerReplyingTheWrongSignatureSendsFailedInstead() async throws {
        await #expect { try await client.callTest(server, "WrongReply") } throws: {
            ($0 as? DBusError)?.name == DBusError.failed
        }
    }

    @Test func unknownObjectInterfaceAndMethodGetTheirStandardErrors() async throws {
        await #expect { try await client.call(destination: server.uniqueName, path: "/nothing/here", interface: TestService.interface, member: "Echo") } throws: {
            ($0 as? DBusError)?.name == DBusError.unknownObject
        }
        await #expect { try await client.call(destination: server.uniqueName, path: TestService.path, interface: "com.example.Missing", member: "Echo") } throws: {
            ($0 as? DBusError)?.name == DBusError.unknownInterface
        }
        await #expect { try await client.callTest(server, "NoSuchMethod") } throws: {
            ($0 as? DBusError)?.name == DBusError.unknownMethod
        }
    }

    @Test func asyncHandlersReplyWhenTheyFinish() async throws {
        let reply = try await client.callTest(server, "Sleep", [.uint32(20)])
        #expect(reply.isEmpty)
    }

    @Test func propertiesCanBeReadOneByOneAndAllAtOnce() async throws {
        let name = try await client.callProperties(server, "Get", [.string(TestService.interface), .string("Name")])
        #expect(name == [.variant(.string("test service"))])
        let all = try await client.callProperties(server, "GetAll", [.string(TestService.interface)])
        let map = try all.decode([String: DBusValue].self, at: 0)
        #expect(map["Name"] == .string("test service"))
        #expect(map["Level"] == .uint32(7))
        #expect(map["Secret"] == nil, "write-only properties are not listed")
    }

    @Test func readOnlyPropertiesRefuseSet() async throws {
        await #expect {
            try await client.callProperties(server, "Set", [.string(TestService.interface), .string("Name"), .variant(.string("x"))])
        } throws: { ($0 as? DBusError)?.name == DBusError.propertyReadOnly }
    }

    @Test func setWithTheWrongTypeIsRejected() async throws {
        await #expect {
            try await client.callProperties(server, "Set", [.string(TestService.interface), .string("Level"), .variant(.string("loud"))])
        } throws: { ($0 as? DBusError)?.name == DBusError.invalidArgs }
        #expect(await server.property("Level", of: TestService.interface, at: TestService.path) == .uint32(7))
    }

    @Test func willSetCanRefuseAValue() async throws {
        await #expect {
            try await client.callProperties(server, "Set", [.string(TestService.interface), .string("Level"), .variant(.uint32(101))])
        } throws: { ($0 as? DBusError)?.name == "com.example.Error.TooLoud" }
    }

    @Test func aPeerSettingAPropertyUpdatesItAndAnnouncesIt() async throws {
        let changes = try await client.signals(matching: MatchRule(
            sender: server.uniqueName, path: TestService.path, interface: "org.freedesktop.DBus.Properties",
            member: "PropertiesChanged"))
        _ = try await client.callProperties(server, "Set", [.string(TestService.interface), .string("Level"), .variant(.uint32(9))])
        #expect(await server.property("Level", of: TestService.interface, at: TestService.path) == .uint32(9))
        let signal = try await changes.first(within: .seconds(5)) { _ in true }
        #expect(signal.body == [.string(TestService.interface), .stringVariantMap(["Level": .uint32(9)]), .stringArray([])])
    }

    @Test func setPropertyEmitsOnlyRealChangesOfAnnouncedProperties() async throws {
        let changes = try await client.signals(matching: MatchRule(
            sender: server.uniqueName, interface: "org.freedesktop.DBus.Properties", member: "PropertiesChanged"))
        // Unchanged value: no signal. Quiet property: no signal. Then a real change: one signal.
        try await server.setProperty("Name", to: .string("test service"), of: TestService.interface, at: TestService.path)
        try await server.setProperty("Quiet", to: .int32(5), of: TestService.interface, at: TestService.path)
        try await server.setProperty("Name", to: .string("renamed"), of: TestService.interface, at: TestService.path)
        let signal = try await changes.first(within: .seconds(5)) { _ in true }
        #expect(signal.body[1] == .stringVariantMap(["Name": .string("renamed")]))
    }

    @Test func exportRejectsPropertiesOfTheWrongType() async throws {
        await #expect(throws: DBusError.self) {
            try await server.export(TestService.definition(), properties: ["Name": .uint32(1)], at: "/com/example/other")
        }
    }

    @Test func peerPingAnswers() async throws {
        let reply = try await client.call(
            destination: server.uniqueName, path: "/", interface: "org.freedesktop.DBus.Peer", member: "Ping")
        #expect(reply.isEmpty)
    }
}
