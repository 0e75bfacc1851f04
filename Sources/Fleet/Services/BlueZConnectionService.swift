import DBus
import Logging
import ServiceLifecycle

/// The daemon's connection to bluetoothd's bus (thread "dbus-bluez"), open from start to stop;
/// closed after the fleet has stopped with it.
///
/// Throws `DaemonFailure` (69, EX_UNAVAILABLE) when the bus cannot be reached.
public struct BlueZConnectionService: SequencedService {
    public let name = "BlueZ connection"
    public let connection = StartedValue<DBusConnection>(of: "BlueZ connection")
    private let bus: BusAddress
    private let logger: Logger

    public init(bus: BusAddress, logger: Logger) {
        self.bus = bus
        self.logger = logger
    }

    public func run(reportStarted: @escaping @Sendable () -> Void) async throws {
        let opened: DBusConnection
        do {
            opened = try await DBusConnection.connect(to: bus, threadName: "dbus-bluez")
        } catch {
            logger.critical("cannot connect to the bus", metadata: ["bus": "\(bus)", "error": "\(error)"])
            throw DaemonFailure(message: "cannot connect to the bus (\(bus)): \(error)", exitCode: 69)
        }
        connection.publish(opened)
        reportStarted()

        try? await gracefulShutdown()
        await opened.close()
    }
}
