import DBus
import Testing
import TestSupport

@Suite("Name-owner tracking")
struct NameOwnerTests {
    @Test func aServiceAppearingVanishingAndReturningIsSeenInOrder() async throws {
        let fixture = try BusFixture()
        let watcher = try await fixture.connect("watcher")
        let owners = try await watcher.watchNameOwner("com.example.Service")
        func nextOwner(_ what: String) async throws -> String? {
            try await owners.first(within: .seconds(5), what) { _ in true }
        }
        #expect(try await nextOwner("the initial owner") == nil, "nobody owns the name yet")

        let service = try await fixture.connect("service-1")
        try await requestName("com.example.Service", on: service)
        #expect(try await nextOwner("the name to appear") == service.uniqueName)

        await service.close()
        #expect(try await nextOwner("the name to vanish") == nil)

        let replacement = try await fixture.connect("service-2")
        try await requestName("com.example.Service", on: replacement)
        #expect(try await nextOwner("the name to return") == replacement.uniqueName)
        #expect(replacement.uniqueName != service.uniqueName)
        #expect(await watcher.trackedOwner(of: "com.example.Service") == replacement.uniqueName)
    }

    @Test func nameOwnerAnswersNilForAnUnownedName() async throws {
        let fixture = try BusFixture()
        let connection = try await fixture.connect()
        #expect(try await connection.nameOwner(of: "com.example.Nobody") == nil)
        #expect(try await connection.nameOwner(of: busDaemon) == busDaemon)
    }
}
