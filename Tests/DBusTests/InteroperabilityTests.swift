import DBus
import Testing
import TestSupport

/// Peers this project did not write (systemd's busctl, libdbus's dbus-send, GLib's gdbus) calling
/// what the library exports.
@Suite("Interoperability with busctl, dbus-send and gdbus")
struct InteroperabilityTests {
    let fixture: BusFixture
    let server: DBusConnection

    init() async throws {
        fixture = try BusFixture()
        server = try await fixture.connect("server")
        await server.addObjectManager(at: .root)
        try await TestService.export(on: server)
    }

    var address: String { fixture.bus.address }

    @Test func busctlCallsAMethod() throws {
        let result = try ChildProcess.run(
            "/usr/bin/busctl",
            ["--address=\(address)", "call", server.uniqueName, TestService.path.rawValue, TestService.interface, "Add", "ii", "40", "2"])
        #expect(result.status == 0)
        #expect(result.output == "i 42")
    }

    @Test func busctlReadsAPropertyAndWalksTheTree() throws {
        let property = try ChildProcess.run(
            "/usr/bin/busctl",
            ["--address=\(address)", "get-property", server.uniqueName, TestService.path.rawValue, TestService.interface, "Name"])
        #expect(property.output == "s \"test service\"")
        let tree = try ChildProcess.run("/usr/bin/busctl", ["--address=\(address)", "tree", "--list", server.uniqueName])
        #expect(tree.status == 0)
        #expect(tree.output.split(separator: "\n").contains("/com/example/test"))
    }

    @Test func dbusSendSeesErrorReplies() throws {
        let result = try ChildProcess.run(
            "/usr/bin/dbus-send",
            ["--bus=\(address)", "--print-reply", "--dest=\(server.uniqueName)", TestService.path.rawValue, "\(TestService.interface).Fail"])
        #expect(result.status != 0)
        let good = try ChildProcess.run(
            "/usr/bin/dbus-send",
            ["--bus=\(address)", "--print-reply=literal", "--dest=\(server.uniqueName)", TestService.path.rawValue,
             "\(TestService.interface).Add", "int32:1", "int32:2"])
        #expect(good.output.trimmingCharacters(in: .whitespaces) == "int32 3")
    }

    @Test func gdbusIntrospectsAndCallsWithVariants() throws {
        let introspection = try ChildProcess.run(
            "/usr/bin/gdbus", ["introspect", "--address", address, "--dest", server.uniqueName, "--object-path", TestService.path.rawValue])
        #expect(introspection.status == 0)
        #expect(introspection.output.contains("interface com.example.Test1"))
        let echo = try ChildProcess.run(
            "/usr/bin/gdbus",
            ["call", "--address", address, "--dest", server.uniqueName, "--object-path", TestService.path.rawValue,
             "--method", "\(TestService.interface).Echo", "<{'a': <int16 -5>}>"])
        #expect(echo.status == 0)
        #expect(echo.output == "(<{'a': <int16 -5>}>,)")
        let objects = try ChildProcess.run(
            "/usr/bin/gdbus",
            ["call", "--address", address, "--dest", server.uniqueName, "--object-path", "/",
             "--method", "org.freedesktop.DBus.ObjectManager.GetManagedObjects"])
        #expect(objects.output.contains("objectpath '/com/example/test'"))
    }
}
