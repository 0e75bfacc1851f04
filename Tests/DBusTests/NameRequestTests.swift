import DBus
import Testing
import TestSupport

@Suite("Requesting and releasing well-known names")
struct NameRequestTests {
    @Test("the first requester owns a name; a second one is told it exists; release hands it over")
    func requestAndRelease() async throws {
        let bus = try PrivateBus()
        defer { bus.stop() }
        let first = try await DBusConnection.connect(to: .address(bus.address))
        let second = try await DBusConnection.connect(to: .address(bus.address))
        #expect(try await first.requestName("org.example.Owned") == .primaryOwner)
        #expect(try await first.requestName("org.example.Owned") == .alreadyOwner)
        #expect(try await second.requestName("org.example.Owned") == .exists)
        #expect(try await second.nameOwner(of: "org.example.Owned") == first.uniqueName)
        #expect(try await first.releaseName("org.example.Owned") == .released)
        #expect(try await first.releaseName("org.example.Owned") == .nonExistent)
        #expect(try await second.requestName("org.example.Owned") == .primaryOwner)
        await first.close()
        await second.close()
    }

    @Test("unique names cannot be requested")
    func uniqueNameRefused() async throws {
        let bus = try PrivateBus()
        defer { bus.stop() }
        let connection = try await DBusConnection.connect(to: .address(bus.address))
        await #expect(throws: (any Error).self) { try await connection.requestName(":1.99") }
        await connection.close()
    }
}
