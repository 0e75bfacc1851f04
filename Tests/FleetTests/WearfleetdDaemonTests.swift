import BlueZ
import BlueZSimulator
import DBus
import Fleet
import FleetCore
import Foundation
import Synchronization
import Testing
import TestSupport

/// The daemon as users run it: the `wearfleetd` binary against the simulated bluetoothd, across
/// restarts, a damaged state file and a reload.
@Suite("wearfleetd against the simulated bluetoothd")
struct WearfleetdDaemonTests {
    static let pinned = "AA:BB:CC:00:50:01"
    /// A resolvable private address (random, top bits 01): bluetoothd never keeps such a device
    /// (`device_address_is_private` in BlueZ's `src/device.c`), so it forgets it
    /// `TemporaryTimeout` after its link ends. A public or static address that a client
    /// connected would be kept, on disk too.
    static let pool = "4A:BB:CC:00:50:02"
    static let third = "AA:BB:CC:00:50:03"

    /// A scratch directory with a config, a drop-in directory and a state directory.
    struct Setup {
        let directory: URL
        var config: URL { directory.appendingPathComponent("wearfleetd.toml") }
        var dropIns: URL { directory.appendingPathComponent("wearfleetd.d") }
        var state: URL { directory.appendingPathComponent("state") }
        var stateFile: URL { state.appendingPathComponent("known-devices.json") }

        init() throws {
            directory = FileManager.default.temporaryDirectory.appendingPathComponent("wearfleetd-daemon-\(UUID().uuidString)")
            try FileManager.default.createDirectory(at: directory.appendingPathComponent("wearfleetd.d"), withIntermediateDirectories: true)
            try FileManager.default.createDirectory(at: directory.appendingPathComponent("state"), withIntermediateDirectories: true)
            try """
                [daemon]
                state_debounce = "100ms"
                [fleet]
                max_connections = 4
                [[pinned]]
                address = "\(WearfleetdDaemonTests.pinned)"
                name = "pinned-strap"
                class = "strap"
                [pool]
                name_prefixes = ["HRM-Pool"]
                default_class = "strap"
                [classes.strap]
                subscribe = ["2A37"]
                required_services = ["180D"]
                [metrics]
                enabled = false
                """.write(to: config, atomically: true, encoding: .utf8)
        }

        func remove() { try? FileManager.default.removeItem(at: directory) }
    }

    /// One run of the daemon, its JSON log lines read as events.
    final class Daemon: Sendable {
        let process: ChildProcess

        init(_ setup: Setup, bus: String) throws {
            process = try ChildProcess(
                WearfleetdCommandTests.binary,
                ["--config", setup.config.path, "--state-dir", setup.state.path, "--bus", bus, "--log-format", "json"],
                mergeStderr: true)
        }

        /// Reads log lines until one satisfies `match`; fails after `seconds`. The blocking reads
        /// run on a dispatch thread: blocking the test's concurrency threads would starve the
        /// simulator, which runs on them.
        @discardableResult
        func waitForLog(
            _ what: String, within seconds: Double = 90, _ match: @escaping @Sendable ([String: Any]) -> Bool
        ) async throws -> [String: Any] {
            let process = self.process
            let line: String = try await withCheckedThrowingContinuation { continuation in
                DispatchQueue.global().async {
                    let deadline = Date().addingTimeInterval(seconds)
                    do {
                        while true {
                            let remaining = deadline.timeIntervalSinceNow
                            guard remaining > 0 else { throw TimedOut(what: what, after: .seconds(seconds)) }
                            let line = try process.readLine(within: remaining)
                            if let entry = Self.parse(line), match(entry) { return continuation.resume(returning: line) }
                        }
                    } catch {
                        continuation.resume(throwing: error)
                    }
                }
            }
            return Self.parse(line) ?? [:]
        }

        static func parse(_ line: String) -> [String: Any]? {
            guard let data = line.data(using: .utf8) else { return nil }
            return (try? JSONSerialization.jsonObject(with: data)) as? [String: Any]
        }

        /// Waits until every address in `addresses` has logged `device_state=ready`.
        func waitForReady(_ addresses: Set<String>, within seconds: Double = 90) async throws {
            let pending = Pending(addresses)
            try await waitForLog("\(addresses.sorted()) to be ready", within: seconds) { entry in
                let metadata = entry["metadata"] as? [String: Any] ?? [:]
                if metadata["device_state"] as? String == "ready", let address = metadata["device_address"] as? String {
                    return pending.remove(address)
                }
                return false
            }
        }

        /// Addresses still to see, checked off from the reading thread.
        final class Pending: Sendable {
            private let remaining: Mutex<Set<String>>
            init(_ addresses: Set<String>) { remaining = Mutex(addresses) }
            /// Checks one off; true when none is left.
            func remove(_ address: String) -> Bool {
                remaining.withLock {
                    $0.remove(address)
                    return $0.isEmpty
                }
            }
        }

        /// SIGTERM and the exit status; waited for on a dispatch thread, as the daemon's clean
        /// stop needs the simulator (on the test's concurrency threads) to answer its disconnects.
        func stop() async -> Int32 {
            let process = self.process
            return await withCheckedContinuation { continuation in
                DispatchQueue.global().async { continuation.resume(returning: process.terminate(signal: SIGTERM, grace: 15)) }
            }
        }
    }

    static func event(_ name: String) -> @Sendable ([String: Any]) -> Bool {
        { ($0["metadata"] as? [String: Any])?["event"] as? String == name }
    }

    static func simulator(on bus: PrivateBus) async throws -> BlueZSimulator {
        let scenario = Scenario(
            seed: 51, adapters: [AdapterSpec(name: "hci0", slots: 5)],
            devices: [
                DeviceSpec(kind: .heartRateStrap, address: pinned, addressType: "public", name: "Pinned Strap", bonded: true),
                // Unbonded, with a private address: bluetoothd forgets it soon after it disconnects.
                DeviceSpec(kind: .heartRateStrap, address: pool, addressType: "random", name: "HRM-Pool 1", bonded: false),
                DeviceSpec(kind: .heartRateStrap, address: third, addressType: "public", name: "Third Strap", bonded: true),
            ])
        let simulator = try BlueZSimulator(scenario: scenario, bus: .address(bus.address), timings: .fast)
        try await simulator.start()
        return simulator
    }

    @Test func aRestartRestoresKnownDevicesEvenOnesBluetoothdForgot() async throws {
        let setup = try Setup()
        defer { setup.remove() }
        let bus = try PrivateBus()
        let simulator = try await Self.simulator(on: bus)

        // The pool strap is found by discovery the first time.
        let first = try Daemon(setup, bus: bus.address)
        try await first.waitForReady([Self.pinned, Self.pool])
        #expect(await first.stop() == 0, "a clean stop")
        let saved = try String(contentsOf: setup.stateFile, encoding: .utf8)
        #expect(saved.contains(Self.pinned) && saved.contains(Self.pool))
        #expect(saved.contains("\"membership\" : \"pool\""))

        // Stopping disconnected both; bluetoothd then drops the unbonded strap's object.
        let client = BlueZClient(connection: try await DBusConnection.connect(to: .address(bus.address)))
        try await client.start()
        let forgotten = await client.waitForTree(timeout: .seconds(10)) { $0.devices(address: Self.pool).isEmpty }
        #expect(forgotten, "bluetoothd forgot the unbonded strap")
        await simulator.resetCounters()

        // The second run knows both from the state file and reconnects the forgotten one: on its
        // last adapter with ConnectDevice where bluetoothd offers it (stock bluetoothd does not),
        // or through discovery, whichever is first.
        let second = try Daemon(setup, bus: bus.address)
        let loaded = try await second.waitForLog("the state file to load") { entry in
            Self.event("state_loaded")(entry) && (entry["metadata"] as? [String: Any])?["known_devices"] != nil
        }
        #expect((loaded["metadata"] as? [String: Any])?["known_devices"] as? String == "2")
        try await second.waitForReady([Self.pinned, Self.pool])
        #expect(await simulator.counterSnapshot().connectAttempts[Self.pool, default: 0] >= 1)
        #expect(await second.stop() == 0)
        await client.connection.close()
        await simulator.stop()
    }

    @Test func aCorruptStateFileIsSetAsideAndTheDaemonStarts() async throws {
        let setup = try Setup()
        defer { setup.remove() }
        try Data("{ this is not json".utf8).write(to: setup.stateFile)
        let bus = try PrivateBus()
        let simulator = try await Self.simulator(on: bus)
        let daemon = try Daemon(setup, bus: bus.address)
        try await daemon.waitForReady([Self.pinned])
        // Set aside as `known-devices.json.corrupt-<time>`; the running daemon's atomic writes
        // come and go beside it as `known-devices.json.tmp`.
        let kept = try FileManager.default.contentsOfDirectory(atPath: setup.state.path)
        #expect(kept.contains { $0.hasPrefix("known-devices.json.corrupt-") }, "the damaged file was kept aside: \(kept)")
        #expect(await daemon.stop() == 0)
        // The set-aside file still holds the damaged bytes; the new state file is valid JSON.
        let asideName = try #require(kept.first { $0.hasPrefix("known-devices.json.corrupt-") })
        let aside = try String(contentsOf: setup.state.appendingPathComponent(asideName), encoding: .utf8)
        #expect(aside == "{ this is not json")
        let fresh = try Data(contentsOf: setup.stateFile)
        #expect((try? JSONSerialization.jsonObject(with: fresh)) != nil)
        await simulator.stop()
    }

    @Test func sighupAppliesANewPinWithoutTouchingOtherLinksAndKeepsTheOldConfigOnError() async throws {
        let setup = try Setup()
        defer { setup.remove() }
        let bus = try PrivateBus()
        let simulator = try await Self.simulator(on: bus)
        let daemon = try Daemon(setup, bus: bus.address)
        try await daemon.waitForReady([Self.pinned])
        await simulator.resetCounters()

        // A drop-in that does not parse: reported as file:line, the running configuration stays.
        let bad = setup.dropIns.appendingPathComponent("20-bad.toml")
        try "[fleet]\nmax_connections = \"many\"\n".write(to: bad, atomically: true, encoding: .utf8)
        daemon.process.signal(SIGHUP)
        let rejected = try await daemon.waitForLog("the bad drop-in to be rejected") { entry in
            Self.event("reload_rejected")(entry) && (entry["message"] as? String ?? "").contains("20-bad.toml:2:")
        }
        #expect((rejected["message"] as? String)?.contains("max_connections") == true)
        try FileManager.default.removeItem(at: bad)

        // Pinning the third strap connects it; the pinned strap's link is not touched.
        try """
            [[pinned]]
            address = "\(Self.third)"
            name = "third"
            class = "strap"
            """.write(to: setup.dropIns.appendingPathComponent("10-third.toml"), atomically: true, encoding: .utf8)
        daemon.process.signal(SIGHUP)
        try await daemon.waitForLog("the reload to be applied", Self.event("reloaded"))
        try await daemon.waitForReady([Self.third])
        let counters = await simulator.counterSnapshot()
        #expect(counters.connectAttempts[Self.pinned, default: 0] == 0, "the pinned strap kept its link")
        #expect(counters.linkDrops[Self.pinned, default: 0] == 0)
        #expect(await daemon.stop() == 0)
        let saved = try String(contentsOf: setup.stateFile, encoding: .utf8)
        #expect(saved.contains(Self.third))
        await simulator.stop()
    }
}
