import DBus
import Testing
import TestSupport

@Suite("ObjectManager and introspection")
struct ObjectManagerTests {
    let fixture: BusFixture
    let server: DBusConnection
    let client: DBusConnection
    let devicePath: DBusObjectPath = "/org/example/hci0/dev_AA_BB"

    init() async throws {
        fixture = try BusFixture()
        server = try await fixture.connect("server")
        client = try await fixture.connect("client")
        await server.addObjectManager(at: .root)
    }

    func interfaceSignals() async throws -> AsyncThrowingStream<DBusMessage, any Error> {
        try await client.signals(matching: MatchRule(sender: server.uniqueName, interface: "org.freedesktop.DBus.ObjectManager"))
    }

    @Test func getManagedObjectsListsEveryObjectWithItsProperties() async throws {
        try await server.export(TestService.definition(), properties: TestService.initialProperties, at: devicePath)
        let reply = try await client.call(
            destination: server.uniqueName, path: .root, interface: "org.freedesktop.DBus.ObjectManager",
            member: "GetManagedObjects")
        try reply.expectSignature("a{oa{sa{sv}}}")
        let objects = try reply.decode([DBusObjectPath: [String: [String: DBusValue]]].self, at: 0)
        #expect(objects[devicePath]?[TestService.interface]?["Name"] == .string("test service"))
    }

    @Test func exportingEmitsInterfacesAddedFromTheManagersPath() async throws {
        let signals = try await interfaceSignals()
        try await server.export(TestService.definition(), properties: TestService.initialProperties, at: devicePath)
        let added = try await signals.first(within: .seconds(5)) { $0.member == "InterfacesAdded" }
        #expect(added.path == .root, "BlueZ clients expect ObjectManager signals from the manager's own path")
        #expect(try added.body.decode(DBusObjectPath.self, at: 0) == devicePath)
        let interfaces = try added.body.decode([String: [String: DBusValue]].self, at: 1)
        #expect(interfaces[TestService.interface]?["Level"] == .uint32(7))
    }

    @Test func unexportingEmitsInterfacesRemoved() async throws {
        try await server.export(TestService.definition(), properties: TestService.initialProperties, at: devicePath)
        let signals = try await interfaceSignals()
        try await server.unexport(devicePath)
        let removed = try await signals.first(within: .seconds(5)) { $0.member == "InterfacesRemoved" }
        #expect(removed.body == [.objectPath(devicePath), .stringArray([TestService.interface])])
        await #expect { try await client.callTest(server, "Add", [.int32(1), .int32(1)]) } throws: { _ in true }
    }

    @Test func introspectionDescribesInterfacesAndChildren() async throws {
        try await server.export(TestService.definition(), properties: TestService.initialProperties, at: devicePath)
        let root = try await client.call(
            destination: server.uniqueName, path: .root, interface: "org.freedesktop.DBus.Introspectable", member: "Introspect")
        let rootXML = try root.decode(String.self, at: 0)
        #expect(rootXML.contains("<node name=\"org\"/>"))
        #expect(rootXML.contains("org.freedesktop.DBus.ObjectManager"))
        let device = try await client.call(
            destination: server.uniqueName, path: devicePath, interface: "org.freedesktop.DBus.Introspectable",
            member: "Introspect")
        let deviceXML = try device.decode(String.self, at: 0)
        #expect(deviceXML.contains("<interface name=\"com.example.Test1\">"))
        #expect(deviceXML.contains("<method name=\"Add\">"))
        #expect(deviceXML.contains("<property name=\"Level\" type=\"u\" access=\"readwrite\"/>"))
        #expect(deviceXML.contains("<signal name=\"Tick\">"))
    }
}
