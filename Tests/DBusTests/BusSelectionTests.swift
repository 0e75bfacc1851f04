import DBus
import Glibc
import Testing
import TestSupport

@Suite("Choosing the bus")
struct BusSelectionTests {
    /// The daemon connects to `.system` by default; deployments and tests point it elsewhere with
    /// the standard environment variables, which the library must honour.
    @Test func systemAndSessionBusesHonourTheirEnvironmentVariables() async throws {
        let fixture = try BusFixture()
        // No other test connects to .system or .session, so changing the variables is safe.
        setenv("DBUS_SYSTEM_BUS_ADDRESS", fixture.bus.address, 1)
        setenv("DBUS_SESSION_BUS_ADDRESS", fixture.bus.address, 1)
        let system = try await DBusConnection.connect(to: .system)
        let session = try await DBusConnection.connect(to: .session)
        let observer = try await fixture.connect("observer")
        let names = try await observer.call(destination: busDaemon, path: busPath, interface: busDaemon, member: "ListNames")
            .decode([String].self, at: 0)
        #expect(names.contains(system.uniqueName))
        #expect(names.contains(session.uniqueName))
        await system.close()
        await session.close()
    }
}
