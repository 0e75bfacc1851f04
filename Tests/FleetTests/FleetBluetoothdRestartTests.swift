import BlueZSimulator
import Fleet
import FleetCore
import Foundation
import Testing
import TestSupport

/// bluetoothd going away under ready straps, as it went on the real stack (Debian 12's 5.66):
/// stopped (`systemctl stop`: SIGTERM), it ends every link itself, reasonless, before its adapter
/// reports the power-off and its name leaves; killed (SIGKILL) and started again at once, it
/// leaves the links to the kernel, which ends them ~2 s later, after the new bluetoothd reported
/// them connected. Neither is the straps' fault: each is ready again with its last failure as it
/// was, and the journal names the cause of each loss.
@Suite("Straps through a bluetoothd restart")
struct FleetBluetoothdRestartTests {
    static let strapCount = 3

    static func start(seed: UInt64, prefix: String, timings: SimulatorTimings = .fast) async throws -> (FleetSimulatorFixture, [DeviceID]) {
        // Unbonded, public: bluetoothd keeps them on disk once Connect was called on them.
        let devices = (1...strapCount).map { index in
            DeviceSpec(kind: .heartRateStrap, address: String(format: "\(prefix):%02X", index), addressType: "public")
        }
        let scenario = Scenario(seed: seed, adapters: [AdapterSpec(name: "hci0", slots: 5)], devices: devices)
        let ids = try devices.map { try FleetSimulatorFixture.id(try #require($0.address)) }
        // The AcquireNotify path: its sockets are the first thing a stopping bluetoothd ends.
        var strap = FleetSimulatorFixture.strapClass()
        strap.useFileDescriptorPath = true
        var reconnect = ReconnectPolicy()
        reconnect.baseDelay = .milliseconds(50)
        reconnect.maxDelay = .milliseconds(200)
        let configuration = FleetRuntimeConfiguration(
            pinned: ids.map { FleetRuntimeConfiguration.PinnedDevice(id: $0, className: "strap") }, classes: ["strap": strap],
            pool: PoolConfiguration(maxConnections: strapCount), reconnect: reconnect)
        let fleet = try await FleetSimulatorFixture.start(scenario, configuration, seed: seed, timings: timings)
        try await Self.waitForEveryStrapReady(fleet, "every strap ready")
        return (fleet, ids)
    }

    /// Ready on an adapter, with bluetoothd there: a device's machine may say `ready` for an
    /// instant after the fleet applied its link's loss.
    static func waitForEveryStrapReady(_ fleet: FleetSimulatorFixture, _ what: String) async throws {
        try await fleet.waitForStatus(what) { status in
            status.bluetoothdPresent && status.pinnedReady == strapCount && status.devices.allSatisfy { $0.adapter != nil }
        }
    }

    static func lastFailures(_ fleet: FleetSimulatorFixture) async -> [DeviceID: FailureClass?] {
        Dictionary(uniqueKeysWithValues: await fleet.orchestrator.status().devices.map { ($0.id, $0.lastFailure) })
    }

    /// Applies `fault` and waits until every strap has left `ready`.
    static func applyAndWaitForEveryStrapToLeaveReady(_ fleet: FleetSimulatorFixture, _ ids: [DeviceID], _ fault: FaultCommand)
        async throws
    {
        try await fleet.simulator.apply(fault)
        try await withTimeout(.seconds(60), "every strap to leave ready") {
            var stillReady = Set(ids)
            for await (device, state) in fleet.changes where state != .ready {
                stillReady.remove(device)
                if stillReady.isEmpty { return }
            }
        }
    }

    /// The causes the journal gave for the straps' link losses, by address.
    static func linkLossCauses(_ fleet: FleetSimulatorFixture) -> [String: [String]] {
        var causes: [String: [String]] = [:]
        for entry in fleet.log?.entries ?? [] where entry.event == "link_loss_cause" {
            guard case .string(let address)? = entry.metadata["device_address"], case .string(let cause)? = entry.metadata["cause"] else {
                continue
            }
            causes[address, default: []].append(cause)
        }
        return causes
    }

    /// Waits for a value from every strap, counting from now: each notifies again.
    static func waitForAValueFromEveryStrap(_ fleet: FleetSimulatorFixture, _ ids: [DeviceID]) async throws {
        let feed = fleet.orchestrator.activity(bufferingNewest: 1024)
        try await withTimeout(.seconds(60), "a value from every strap") {
            var silent = Set(ids)
            for await activity in feed {
                if case .value(let value) = activity { silent.remove(value.device) }
                if silent.isEmpty { return }
            }
        }
    }

    @Test("bluetoothd stopped as by SIGTERM: every strap is ready again, its last failure unchanged, each loss put down to the stop")
    func stoppedBluetoothd() async throws {
        let (fleet, ids) = try await Self.start(seed: 71, prefix: "AA:BB:CC:00:71")
        let failuresBefore = await Self.lastFailures(fleet)
        try await Self.applyAndWaitForEveryStrapToLeaveReady(fleet, ids, FaultCommand(.restart, seconds: 0.1))
        try await Self.waitForEveryStrapReady(fleet, "every strap ready again after the restart")
        #expect(await Self.lastFailures(fleet) == failuresBefore, "the restart is no strap's failure")
        // Each link ended reasonless before the power-off and the name's leaving: the journal
        // says which of them ended it.
        let causes = Self.linkLossCauses(fleet)
        for id in ids {
            let strapCauses = causes[id.address.description] ?? []
            #expect(strapCauses.count == 1, "one cause for \(id.address): \(causes)")
            #expect(strapCauses.allSatisfy { $0 == "adapter_powered_off" || $0 == "bluetoothd_gone" }, "\(causes)")
        }
        try await Self.waitForAValueFromEveryStrap(fleet, ids)
        await fleet.stop()
    }

    @Test("bluetoothd killed and started again at once: every strap is ready again, its last failure unchanged, each loss put down to the links it left behind")
    func killedBluetoothd() async throws {
        var timings = SimulatorTimings.fast
        // The kernel ends the links well after the restart's 50 ms, so that even on a starved
        // machine the new bluetoothd (and the daemon) see them connected first, as on a gateway
        // where bluetoothd is back at once: the losses then come within the daemon's 10 s.
        timings.leftBehindLinkTimeout = 3
        let (fleet, ids) = try await Self.start(seed: 72, prefix: "AA:BB:CC:00:72", timings: timings)
        let failuresBefore = await Self.lastFailures(fleet)
        try await Self.applyAndWaitForEveryStrapToLeaveReady(fleet, ids, FaultCommand(.restart, seconds: 0.05, killed: true))
        try await Self.waitForEveryStrapReady(fleet, "every strap ready again after the kill")
        #expect(await Self.lastFailures(fleet) == failuresBefore, "the kill is no strap's failure")
        let causes = Self.linkLossCauses(fleet)
        for id in ids {
            #expect(causes[id.address.description] == ["bluetoothd_left_links_behind"], "\(causes)")
        }
        try await Self.waitForAValueFromEveryStrap(fleet, ids)
        await fleet.stop()
    }
}
