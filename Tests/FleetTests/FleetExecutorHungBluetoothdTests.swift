import Fleet
import FleetCore
import Logging
import SystemdSupport
import Testing
import TestSupport

/// The executor never waits for bluetoothd between inputs: with a fake bluetoothd whose
/// `Disconnect` or discovery calls never answer, another device's link loss is handled, commands
/// and reloads answer, the watchdog's probe answers, and `stop` ends within its bound. A loop
/// that does stop applying inputs stops the watchdog's pings.
@Suite("FleetOrchestrator with a bluetoothd that does not answer")
struct FleetExecutorHungBluetoothdTests {
    typealias Fixture = FleetExecutorTests
    static let hci0 = AdapterID("hci0")

    /// Waits until `id` left `ready` and came back to it (a link lost and made again).
    static func lostAndReadyAgain(_ id: DeviceID, in changes: AsyncStream<(DeviceID, DeviceState)>) async throws {
        try await withAbandoningTimeout(.seconds(60), "\(id) to lose its link and be ready again") {
            var left = false
            for await (device, state) in changes where device == id {
                if state != .ready { left = true } else if left { return }
            }
            throw CancellationError()
        }
    }

    /// Answers within a bound sized for a slow gateway; a wait for bluetoothd would never end,
    /// and the test fails instead of hanging with it.
    static func answers<T: Sendable>(_ what: String, _ operation: @escaping @Sendable () async throws -> T) async throws -> T {
        try await withAbandoningTimeout(.seconds(60), what, operation)
    }

    @Test func aDisconnectBluetoothdNeverAnswersHoldsNoOtherDevice() async throws {
        let strap = Fixture.device(21), watch = Fixture.device(22)
        let fleet = try await Fixture.start(Fixture.configuration(pinned: [strap, watch]))
        let changes = fleet.orchestrator.stateChanges
        fleet.bluetooth.appear(adapters: [Self.hci0], objects: [strap: [.init(adapter: Self.hci0)], watch: [.init(adapter: Self.hci0)]])
        try await fleet.waitForStatus("both ready") { $0.pinnedReady == 2 }
        fleet.bluetooth.hang(.disconnect)

        // Unpinning the linked watch disconnects it: that call never answers.
        let summary = try await Self.answers("the reload that unpins the watch") {
            await fleet.orchestrator.reconfigure(Fixture.configuration(pinned: [strap]))
        }
        #expect(summary.pinnedRemoved == [watch])
        #expect(fleet.bluetooth.calls.contains("disconnect \(watch.address)"))

        // The strap's link loss is handled meanwhile: it is connected again.
        fleet.bluetooth.dropLink(strap)
        try await Self.lostAndReadyAgain(strap, in: changes)
        try await Self.answers("a command") { try await fleet.orchestrator.reconnect(strap) }
        #expect(try await Self.answers("the watchdog's probe") { await fleet.orchestrator.heartbeat() })
        // `stop`'s own disconnect of the strap does not answer either: it gives up after its bound.
        try await Self.answers("stop") { await fleet.orchestrator.stop() }
    }

    @Test func discoveryCallsBluetoothdNeverAnswersHoldNoOtherDevice() async throws {
        let strap = Fixture.device(23), missing = Fixture.device(24)
        let fleet = try await Fixture.start(Fixture.configuration(pinned: [strap, missing]))
        let changes = fleet.orchestrator.stateChanges
        fleet.bluetooth.hang(.discovery)
        // The missing device is looked for: discovery's first call never answers.
        fleet.bluetooth.appear(adapters: [Self.hci0], objects: [strap: [.init(adapter: Self.hci0)]])
        try await fleet.waitForStatus("the strap ready") { $0.devices.first { $0.id == strap }?.state == .ready }
        try await fleet.bluetooth.waitForCall("a discovery call") { $0.hasPrefix("discovery hci0") }

        fleet.bluetooth.dropLink(strap)
        try await Self.lostAndReadyAgain(strap, in: changes)
        var narrower = Fixture.configuration(pinned: [strap, missing])
        narrower.scanUUIDs = [Fixture.heartRateService]
        let reload = narrower
        _ = try await Self.answers("a reload") { await fleet.orchestrator.reconfigure(reload) }
        try await Self.answers("a command") { try await fleet.orchestrator.reconnect(missing) }
        #expect(try await Self.answers("the watchdog's probe") { await fleet.orchestrator.heartbeat() })
        let calls = fleet.bluetooth.calls.filter { $0.hasPrefix("discovery hci0") }
        #expect(calls == ["discovery hci0 filter [] any"], "one call at a time, the one in flight never answered: \(calls)")
        try await Self.answers("stop") { await fleet.orchestrator.stop() }
    }

    /// While the loop is held up, a burst of RSSI changes waits as one input per device, and a
    /// link's loss among them is kept and applied in its place.
    @Test func whileTheLoopIsHeldRSSIBurstsCoalesceAndLinkFactsAreKept() async throws {
        let strap = Fixture.device(26), watch = Fixture.device(27)
        let fleet = try await Fixture.start(Fixture.configuration(pinned: [strap, watch]))
        let changes = fleet.orchestrator.stateChanges
        let hci1 = AdapterID("hci1")
        fleet.bluetooth.appear(
            adapters: [Self.hci0, hci1],
            objects: [strap: [.init(adapter: Self.hci0, rssi: -50)], watch: [.init(adapter: Self.hci0, rssi: -60)]])
        try await fleet.waitForStatus("both ready") { $0.pinnedReady == 2 }
        fleet.bluetooth.hang(.adapterStopped)
        fleet.bluetooth.powerOff(hci1)
        try await fleet.bluetooth.waitForCall("the loop to be held") { $0 == "adapterStopped hci1" }
        for beat in 0..<500 {
            fleet.bluetooth.rssi(-40 - beat % 30, of: strap, on: Self.hci0)
            fleet.bluetooth.rssi(-70 - beat % 20, of: watch, on: Self.hci0)
            if beat == 250 { fleet.bluetooth.dropLink(strap) }
        }
        try await withTimeout(.seconds(60), "the burst to reach the queue") {
            while await fleet.orchestrator.coalescedInputs < 990 { try await Task.sleep(for: .milliseconds(10)) }
        }
        // The strap: its RSSI before the loss, the loss, its RSSI after; the watch: one.
        let waiting = await fleet.orchestrator.waitingInputs
        #expect(waiting <= 8, "\(waiting) inputs wait for 1,001 facts")
        fleet.bluetooth.release(.adapterStopped)
        try await Self.lostAndReadyAgain(strap, in: changes)
        let status = try await fleet.waitForStatus("the newest RSSI applied") { status in
            status.devices.first { $0.id == watch }?.rssi == -70 - 499 % 20
        }
        #expect(status.devices.first { $0.id == strap }?.state == .ready)
        await fleet.orchestrator.stop()
    }

    @Test func theWatchdogPingsWhileBluetoothdHangsAndNotWhenTheLoopStops() async throws {
        let strap = Fixture.device(25)
        let fleet = try await Fixture.start(Fixture.configuration(pinned: [strap]))
        fleet.bluetooth.appear(adapters: [Self.hci0], objects: [strap: [.init(adapter: Self.hci0)]])
        try await fleet.waitForStatus("the strap ready") { $0.pinnedReady == 1 }
        let logger = Logger(label: "watchdog-test") { _ in SwiftLogNoOpLogHandler() }
        let orchestrator = fleet.orchestrator

        // bluetoothd hangs: the probe still answers, true. (Asked directly: a beat would ping
        // through NOTIFY_SOCKET, which other suites set process-wide.)
        fleet.bluetooth.hang(.disconnect)
        fleet.bluetooth.hang(.discovery)
        #expect(try await Self.answers("the probe") { await orchestrator.heartbeat() })

        // The loop stops applying inputs (stuck on one that never returns): the probe misses its
        // deadline and no ping is sent (nor is NOTIFY_SOCKET read).
        fleet.bluetooth.hang(.adapterStopped)
        fleet.bluetooth.powerOff(Self.hci0)
        try await fleet.bluetooth.waitForCall("the loop to be stuck") { $0 == "adapterStopped hci0" }
        // Inputs applied since the last probe, before it got stuck, count once as progress: this
        // probe may pass, or not be answered; the beat after it cannot pass.
        _ = try? await withAbandoningTimeout(.seconds(1), "a probe after the last progress") { await orchestrator.heartbeat() }
        let strict = WatchdogService(notifier: SystemdNotifier(), interval: .seconds(2), probeDeadline: .seconds(1), logger: logger) {
            await orchestrator.heartbeat()
        }
        #expect(await strict.beat() == .probeTimedOut)
        // Let go, the loop goes on and the fleet stops (no task of the test is left behind).
        fleet.bluetooth.release(.adapterStopped)
        #expect(try await Self.answers("the probe once the loop goes on") { await orchestrator.heartbeat() })
        try await Self.answers("stop") { await orchestrator.stop() }
    }
}
