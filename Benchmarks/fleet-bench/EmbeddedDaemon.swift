import BlueZ
import DBus
import Fleet
import FleetMetrics
import Foundation
import Logging

/// wearfleetd's runtime in a measured process, wired as `wearfleetd`'s services (`FleetService`) wire it:
/// the state store and restore, one bus connection, `BlueZClient`, `FleetOrchestrator`, the
/// metrics observer and endpoint. Left out, because they do nothing per notification or write:
/// the control endpoint, the reloader, sd_notify and the watchdog.
struct EmbeddedDaemon {
    let orchestrator: FleetOrchestrator
    private let connection: DBusConnection
    private let store: StateStore
    private let metricsEndpoint: MetricsEndpoint?

    static func start(settings: WearfleetConfiguration, bus: String, stateDirectory: String) async throws -> EmbeddedDaemon {
        let logger = Logger(label: "wearfleetd")
        let store = StateStore(directory: URL(fileURLWithPath: stateDirectory), debounce: settings.daemon.stateDebounce, logger: logger)
        let known = try await store.load().devices
        let connection = try await DBusConnection.connect(to: .address(bus), threadName: "dbus-bluez")
        let orchestrator = try await FleetOrchestrator.restoring(
            known, savingIn: store, configuration: settings.runtimeConfiguration, client: BlueZClient(connection: connection),
            logger: logger)
        let metricsEndpoint = await FleetMetrics.observing(orchestrator, serving: settings.metrics, logger: logger)
        try await orchestrator.start()
        return EmbeddedDaemon(orchestrator: orchestrator, connection: connection, store: store, metricsEndpoint: metricsEndpoint)
    }

    func stop() async {
        await orchestrator.stop()
        metricsEndpoint?.stop()
        await connection.close()
        _ = try? await store.flush()
    }
}
