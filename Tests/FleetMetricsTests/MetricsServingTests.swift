import BlueZ
import DBus
import Fleet
import FleetCore
import FleetMetrics
import Foundation
import Glibc
import Logging
import Synchronization
import Testing
import TestSupport

/// `FleetMetrics.serve` decides what a daemon does with `[metrics]`: serve, stay off, or log
/// a bind failure and run on without metrics.
@Suite("Serving metrics from the daemon")
struct MetricsServingTests {
    /// Log lines kept in memory: level, message and the metadata sorted by key.
    final class Lines: Sendable {
        let capture = LogCapture()
        var all: [String] {
            capture.entries.map { entry in
                let fields = entry.metadata.sorted { $0.key < $1.key }.map { "\($0.key)=\($0.value)" }.joined(separator: " ")
                return "\(entry.level) \(entry.message) \(fields)"
            }
        }

        var logger: Logger { capture.logger(label: "serve-test") }
    }

    static func orchestrator(_ logger: Logger) async throws -> (FleetOrchestrator, PrivateBus) {
        let bus = try PrivateBus()
        let client = BlueZClient(connection: try await DBusConnection.connect(to: .address(bus.address)))
        return (try FleetOrchestrator(configuration: FleetRuntimeConfiguration(pinned: []), client: client, logger: logger, seed: 1), bus)
    }

    @Test func aPortInUseIsLoggedWithTheAddressAndServingGoesOnWithout() async throws {
        let log = Lines()
        let (orchestrator, bus) = try await Self.orchestrator(log.logger)
        defer { bus.stop() }
        let holder = try MetricsEndpoint(host: "127.0.0.1", port: 0) { [] }
        defer { holder.stop() }
        let endpoint = FleetMetrics().serve(MetricsSettings(host: "127.0.0.1", port: holder.port), orchestrator: orchestrator, logger: log.logger)
        #expect(endpoint == nil)
        let errors = log.all.filter { $0.hasPrefix("error") }
        #expect(errors.count == 1)
        #expect(errors.first?.contains("127.0.0.1:\(holder.port)") == true)
        #expect(errors.first?.contains("Address already in use") == true)
        #expect(await orchestrator.heartbeat() == false, "the orchestrator is untouched (not started here)")
    }

    @Test func offMeansNoEndpoint() async throws {
        let log = Lines()
        let (orchestrator, bus) = try await Self.orchestrator(log.logger)
        defer { bus.stop() }
        let endpoint = FleetMetrics().serve(MetricsSettings(enabled: false, host: "127.0.0.1", port: 0), orchestrator: orchestrator, logger: log.logger)
        #expect(endpoint == nil)
        #expect(log.all.contains { $0.contains("metrics are off") })
    }

    @Test func aNonLoopbackAddressIsServedWithAWarning() async throws {
        let log = Lines()
        let (orchestrator, bus) = try await Self.orchestrator(log.logger)
        defer { bus.stop() }
        let endpoint = try #require(
            FleetMetrics().serve(
                MetricsSettings(host: "0.0.0.0", port: 0), orchestrator: orchestrator, logger: log.logger,
                limits: MetricsEndpointTests.patient, statusTimeout: .seconds(120)))
        defer { endpoint.stop() }
        #expect(!endpoint.isLoopback)
        #expect(log.all.contains { $0.hasPrefix("warning") && $0.contains("non-loopback") })
        let reply = try await HTTPTestClient.get("/metrics", port: endpoint.port)
        #expect(reply.status == 200)
        #expect(try Exposition(reply.body).value("wearfleet_pinned_devices") == 0)
    }
}
