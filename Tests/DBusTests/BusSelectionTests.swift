import DBus
import Testing
import TestSupport

@Suite("Choosing the bus")
struct BusSelectionTests {
    /// The daemon connects to `.system` by default; deployments and tests point it elsewhere with
    /// the standard environment variables, which the library must honour. The environment is
    /// passed in, so no test changes the process's own environment (which races other threads).
    @Test func systemAndSessionBusesHonourTheirEnvironmentVariables() async throws {
        let fixture = try BusFixture()
        let environment = ["DBUS_SYSTEM_BUS_ADDRESS": fixture.bus.address, "DBUS_SESSION_BUS_ADDRESS": fixture.bus.address]
        let system = try await DBusConnection.connect(to: .system, environment: environment)
        let session = try await DBusConnection.connect(to: .session, environment: environment)
        let observer = try await fixture.connect("observer")
        let names = try await observer.call(destination: busDaemon, path: busPath, interface: busDaemon, member: "ListNames")
            .decode([String].self, at: 0)
        #expect(names.contains(system.uniqueName))
        #expect(names.contains(session.uniqueName))
        await system.close()
        await session.close()
    }

    @Test func theSystemBusHasAStandardDefaultAndTheSessionBusNone() throws {
        #expect(try BusAddress.system.resolved(environment: [:]) == "unix:path=/run/dbus/system_bus_socket")
        #expect(throws: DBusError.self) { try BusAddress.session.resolved(environment: [:]) }
        #expect(try BusAddress.address("unix:path=/x").resolved(environment: ["DBUS_SYSTEM_BUS_ADDRESS": "ignored"]) == "unix:path=/x")
    }
}
