import DBus
import TestSupport

/// A private bus plus connections to it, closed when the test ends.
final class BusFixture: @unchecked Sendable {
    // @unchecked Sendable: `bus` is immutable; tests use a fixture from one task at a time.
    let bus: PrivateBus

    init() throws { bus = try PrivateBus() }

    func connect(_ name: String = "test") async throws -> DBusConnection {
        try await DBusConnection.connect(to: .address(bus.address), threadName: name)
    }

    deinit { bus.stop() }
}

let busDaemon = "org.freedesktop.DBus"
let busPath: DBusObjectPath = "/org/freedesktop/DBus"
