import DBus
import Testing
import TestSupport

@Suite("Connecting and calling the bus")
struct ConnectionTests {
    @Test func connectsAndGetsAUniqueName() async throws {
        let fixture = try BusFixture()
        let connection = try await fixture.connect()
        #expect(connection.uniqueName.hasPrefix(":"))
        await connection.close()
    }

    @Test func callsTheBusDaemonItself() async throws {
        // The bus daemon is a peer this project did not write.
        let fixture = try BusFixture()
        let connection = try await fixture.connect()
        let reply = try await connection.call(
            destination: busDaemon, path: busPath, interface: busDaemon, member: "ListNames")
        let names = try reply.decode([String].self, at: 0)
        #expect(names.contains(busDaemon))
        #expect(names.contains(connection.uniqueName))
        await connection.close()
    }

    @Test func errorRepliesCarryTheirNameAndText() async throws {
        let fixture = try BusFixture()
        let connection = try await fixture.connect()
        await #expect {
            try await connection.call(
                destination: busDaemon, path: busPath, interface: busDaemon, member: "GetNameOwner",
                [.string("com.example.Nobody")])
        } throws: { error in
            guard let error = error as? DBusError else { return false }
            return error.name == DBusError.nameHasNoOwner && error.message.contains("com.example.Nobody")
        }
        await connection.close()
    }

    @Test func connectingToANonexistentBusFails() async throws {
        await #expect(throws: DBusError.self) {
            _ = try await DBusConnection.connect(to: .address("unix:path=/nonexistent/wearfleet-test-bus"))
        }
    }

    @Test func callsAfterCloseFailWithDisconnected() async throws {
        let fixture = try BusFixture()
        let connection = try await fixture.connect()
        await connection.close()
        await #expect {
            try await connection.call(destination: busDaemon, path: busPath, interface: busDaemon, member: "ListNames")
        } throws: { ($0 as? DBusError)?.name == DBusError.disconnected }
    }
}
