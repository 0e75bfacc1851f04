import FleetCore
import Foundation
import Logging
import Synchronization
import SystemdSupport
import TOML
import Testing
import TestSupport
@testable import Fleet

/// What a reload does beyond the fleet machine's diff, without a bus: the state file's pinned or
/// pool records, and the settings only a restart applies.
@Suite("Configuration reload: pin membership and restart-only settings")
struct ConfigurationReloadTests {
    static let strap = FleetExecutorTests.device(1)
    static let watch = FleetExecutorTests.device(2)
    static let stranger = FleetExecutorTests.device(3)

    // MARK: - Pure

    @Test func unpinnedDevicesBecomePoolAndNewPinsPinned() {
        var summary = FleetOrchestrator.ReloadSummary()
        summary.pinnedAdded = [Self.watch]
        summary.pinnedRemoved = [Self.strap]
        summary.reconfigured = [Self.stranger]
        #expect(ConfigurationReload.membershipChanges(after: summary) == [
            .init(device: Self.strap, membership: .pool), .init(device: Self.watch, membership: .pinned),
        ])
        #expect(ConfigurationReload.membershipChanges(after: FleetOrchestrator.ReloadSummary()).isEmpty)
    }

    @Test func onlySettingsReadAtStartUpAreReportedAsNeedingARestart() {
        let old = WearfleetConfiguration()
        var applied = old
        applied.fleet.maxConnections += 1
        applied.pinned = [PinnedDevice(id: Self.strap, definedAt: TOMLPosition(file: "t.toml", line: 1, column: 1))]
        #expect(ConfigurationReload.restartOnlyChanges(from: old, to: old).isEmpty)
        #expect(ConfigurationReload.restartOnlyChanges(from: old, to: applied).isEmpty, "a reload applies these")

        // The daemon starts, stops or reconfigures its ownership coordinator on reload.
        var cluster = old
        cluster.mqtt.enabled = true
        cluster.cluster.enabled = true
        cluster.cluster.lease = .seconds(30)
        cluster.cluster.margin = 4
        cluster.pinned = [PinnedDevice(
            id: Self.strap, preferredGateways: [GatewayID("ward-3")], definedAt: TOMLPosition(file: "t.toml", line: 1, column: 1))]
        #expect(cluster != old)
        #expect(ConfigurationReload.restartOnlyChanges(from: old, to: cluster).isEmpty, "a reload applies [cluster]")
        #expect(ConfigurationReload.restartOnlyChanges(from: cluster, to: old).isEmpty, "a reload turns [cluster] off")

        var restartOnly = old
        restartOnly.daemon.logLevel = .debug
        restartOnly.daemon.stateDebounce = .seconds(9)
        restartOnly.metrics.port += 1
        #expect(ConfigurationReload.restartOnlyChanges(from: old, to: restartOnly)
            == ["daemon.log_level", "daemon.state_debounce", "metrics"])
    }

    @Test func theStateFileRecordsMembershipOfKnownDevicesOnly() async throws {
        let directory = try TemporaryDirectory()
        let store = StateStoreFixture.store(in: directory)
        await store.update(KnownDevice(id: Self.strap, membership: .pinned))
        await store.update(KnownDevice(id: Self.watch, membership: .pool))
        await store.record([
            .init(device: Self.strap, membership: .pool), .init(device: Self.watch, membership: .pinned),
            .init(device: Self.stranger, membership: .pinned),
        ])
        #expect(await store.device(Self.strap)?.membership == .pool)
        #expect(await store.device(Self.watch)?.membership == .pinned)
        #expect(await store.device(Self.stranger) == nil, "a device never met is recorded when first learned")
    }

    // MARK: - One reload, on a fake bluetoothd

    /// The log's `reload…` events (the fleet logs its own too), in order, with their metadata.
    final class EventLog: Sendable {
        let capture = LogCapture()
        private var reloads: [LogCapture.Entry] { capture.entries.filter { $0.event?.hasPrefix("reload") == true } }
        var events: [String] { reloads.compactMap(\.event) }
        func metadata(of event: String) -> Logger.Metadata? { reloads.first { $0.event == event }?.metadata }
    }

    /// The notifications a reload sends, by their first assignment.
    final class RecordingNotifier: ReloadNotifier {
        private let sent = Mutex<[String]>([])
        var messages: [String] { sent.withLock { $0 } }
        func reloading(status: String?) -> SystemdNotifier.Outcome {
            sent.withLock { $0.append("RELOADING=1") }
            return .sent
        }
        func ready(status: String?) -> SystemdNotifier.Outcome {
            sent.withLock { $0.append("READY=1") }
            return .sent
        }
    }

    static func pinning(_ device: DeviceID, logLevel: String = "info") -> String {
        """
        [daemon]
        log_level = "\(logLevel)"
        [[pinned]]
        address = "\(device.address)"
        class = "strap"
        [classes.strap]
        subscribe = ["2A37"]
        required_services = ["180D"]
        """
    }

    @Test func aReloadMovesThePinsInTheStateFileAndARejectedOneKeepsTheRunningConfiguration() async throws {
        let directory = try TemporaryDirectory()
        let configFile = directory.url.appendingPathComponent("wearfleetd.toml")
        let dropIns = directory.url.appendingPathComponent("wearfleetd.d")
        try FileManager.default.createDirectory(at: dropIns, withIntermediateDirectories: true)
        try Self.pinning(Self.strap).write(to: configFile, atomically: true, encoding: .utf8)
        let first = try ConfigurationLoader.load(mainFile: configFile.path, dropInDirectory: dropIns.path).get()

        let events = EventLog()
        let logger = events.capture.logger(label: "reload-test")
        let bluetooth = FakeBluetooth(services: [FleetExecutorTests.heartRateService], characteristics: [FleetExecutorTests.heartRate])
        let orchestrator = FleetOrchestrator(
            configuration: first.runtimeConfiguration, bluetooth: bluetooth, pipeline: ValuePipeline(logger: logger),
            logger: logger, seed: 3)
        let store = StateStoreFixture.store(in: directory)
        await store.update(KnownDevice(id: Self.strap, membership: .pinned))
        await store.update(KnownDevice(id: Self.watch, membership: .pool))
        try await orchestrator.start()
        let notifier = RecordingNotifier()
        let reloader = ConfigurationReloader(
            configPath: configFile.path, dropInDirectory: dropIns.path, orchestrator: orchestrator, store: store,
            notifier: notifier, logger: logger)

        // The watch is pinned instead of the strap, and the log level changed.
        try Self.pinning(Self.watch, logLevel: "debug").write(to: configFile, atomically: true, encoding: .utf8)
        let second = await reloader.reload(replacing: first)
        #expect(second.pinned.map(\.id) == [Self.watch])
        #expect(await store.device(Self.strap)?.membership == .pool)
        #expect(await store.device(Self.watch)?.membership == .pinned)
        #expect(events.events == ["reload_started", "reload_restart_needed", "reloaded"])
        #expect(events.metadata(of: "reload_restart_needed")?["settings"] == "daemon.log_level")

        // A drop-in that does not validate: nothing changes, the running configuration is returned.
        try "[fleet]\nmax_connections = \"many\"\n".write(
            to: dropIns.appendingPathComponent("20-bad.toml"), atomically: true, encoding: .utf8)
        let third = await reloader.reload(replacing: second)
        #expect(third == second)
        #expect(await store.device(Self.watch)?.membership == .pinned)
        #expect(events.events.suffix(3) == ["reload_started", "reload_rejected", "reload_rejected"])
        // Each reload, applied or rejected, is bracketed for systemd.
        #expect(notifier.messages == ["RELOADING=1", "READY=1", "RELOADING=1", "READY=1"])
        await orchestrator.stop()
    }
}
