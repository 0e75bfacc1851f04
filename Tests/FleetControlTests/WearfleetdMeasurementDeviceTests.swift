import BlueZSimulator
import DBus
import FleetControl
import Foundation
import Testing
import TestSupport

/// Devices that wake only to measure, end to end: the real daemon against bluez-sim's cuff (a
/// passkey, encrypted measurements) and scale (Just Works), each woken by the test a few times.
/// Every record reaches the daemon exactly once, the clock is set on every connection, the
/// device sleeps between its sessions with nothing counted against it.
@Suite("wearfleetd with a cuff and a scale that wake to measure", .serialized)
struct WearfleetdMeasurementDeviceTests {
    static let cuff = "AA:BB:CC:00:29:11"
    static let scale = "AA:BB:CC:00:29:12"
    static let passkey: UInt32 = 135_790
    static let wakes = 3

    static func configuration(passkeys: String) -> String {
        """
        [fleet]
        adapters = ["hci0"]

        [classes.cuff]
        subscribe = ["2A35"]
        required_services = ["1810"]
        bond = true
        intermittent = true
        set_time = true

        [classes.scale]
        subscribe = ["2A9D"]
        required_services = ["181D"]
        bond = true
        intermittent = true
        set_time = true

        [[pinned]]
        address = "\(cuff)"
        name = "cuff"
        class = "cuff"

        [[pinned]]
        address = "\(scale)"
        name = "scale"
        class = "scale"

        [pairing]
        capability = "KeyboardDisplay"
        passkeys_file = "\(passkeys)"
        """
    }

    /// A private bus with the simulator playing `devices`, and a scratch directory holding the
    /// passkeys file (`passkeyLine`) and the daemon's files.
    struct Setup {
        let bus: PrivateBus
        let simulator: BlueZSimulator
        let directory: URL
        let passkeys: String
        let files: DaemonFiles

        init(seed: UInt64, devices: [DeviceSpec], passkeyLine: String, scale: Bool) async throws {
            bus = try PrivateBus()
            simulator = try BlueZSimulator(
                scenario: Scenario(seed: seed, adapters: [AdapterSpec(name: "hci0", slots: 5)], devices: devices),
                bus: .address(bus.address), timings: .fast)
            try await simulator.start()
            directory = FileManager.default.temporaryDirectory.appendingPathComponent("wearfleet-measure-\(UUID().uuidString)")
            try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
            passkeys = directory.appendingPathComponent("passkeys").path
            try (passkeyLine + "\n").write(toFile: passkeys, atomically: true, encoding: .utf8)
            var configuration = WearfleetdMeasurementDeviceTests.configuration(passkeys: passkeys)
            if !scale {
                let scalePin = "[[pinned]]\naddress = \"\(WearfleetdMeasurementDeviceTests.scale)\"\nname = \"scale\"\nclass = \"scale\"\n"
                configuration = configuration.replacingOccurrences(of: scalePin, with: "")
            }
            files = try DaemonFiles(configuration: configuration)
        }

        func remove() {
            files.remove()
            try? FileManager.default.removeItem(at: directory)
        }
    }

    static func cuffSpec(records: Int = 3) -> DeviceSpec {
        DeviceSpec(
            kind: .bloodPressureCuff, address: cuff, addressType: "public", pairing: .passkey, passkey: passkey, wake: .onDemand(),
            records: records)
    }

    @Test func everyRecordOnceTheClockSetAndNothingCountedWhileAsleep() async throws {
        let setup = try await Setup(
            seed: 2911,
            devices: [
                Self.cuffSpec(), DeviceSpec(kind: .weightScale, address: Self.scale, addressType: "public", wake: .onDemand(), records: 2),
            ],
            passkeyLine: "\(Self.cuff) \(Self.passkey)", scale: true)
        defer { setup.remove() }
        let (bus, simulator) = (setup.bus, setup.simulator)
        let daemon = try DaemonProcess(bus: bus.address, files: setup.files)
        try await daemon.lines(containing: "control interface ready")
        // Both sleep from the start: absent is their normal state.
        try await daemon.lines(containing: "→ asleep", count: 2, within: .seconds(60))

        for wake in 1...Self.wakes {
            #expect(await simulator.wake(address: Self.cuff))
            #expect(await simulator.wake(address: Self.scale))
            // Each session ends with the device hanging up, and it sleeps again.
            try await daemon.lines(containing: "→ asleep", count: 2 + 2 * wake, within: .seconds(90))
        }

        let counters = await simulator.counterSnapshot()
        #expect(counters.recordsTaken[Self.cuff] == 3 * Self.wakes && counters.recordsTaken[Self.scale] == 2 * Self.wakes)
        #expect(counters.recordsDelivered[Self.cuff] == counters.recordsTaken[Self.cuff])
        #expect(counters.recordsDelivered[Self.scale] == counters.recordsTaken[Self.scale])
        // Bonded once (the cuff's passkey from the file, asked once); the clock set every time.
        #expect(counters.pairings[Self.cuff] == 1 && counters.pairings[Self.scale] == 1)
        #expect(counters.agentRequests == 1)
        #expect(counters.clockWrites[Self.cuff] == Self.wakes && counters.clockWrites[Self.scale] == Self.wakes)

        let status = try await Commands.run(Commands.wearfleetctl, ["status", "--json", "--bus", bus.address])
        #expect(status.status == 0, "\(status.errors)")
        let document = try #require(try JSONSerialization.jsonObject(with: Data(status.output.utf8)) as? [String: Any])
        let devices = try #require(document["devices"] as? [[String: Any]])
        for (address, records) in [(Self.cuff, 3 * Self.wakes), (Self.scale, 2 * Self.wakes)] {
            let device = try #require(devices.first { $0["address"] as? String == address })
            #expect(device["state"] as? String == "asleep")
            // Every record once: as many values as the device delivered, all decoded.
            #expect(device["notifications"] as? Int == records, "\(address): \(device)")
            #expect(device["decodeErrors"] as? Int == 0)
            #expect(device["lastError"] is NSNull, "nothing counted against \(address): \(device)")
            #expect(device["lastValueTime"] as? String != nil)
        }
        // No failure and no setup problem was logged for either (a pending Connect the sleeping
        // device never answered is neither).
        #expect(!daemon.seenLines.contains { $0.contains("device failure:") || $0.contains("characteristic setup failed") },
            "\(daemon.seenLines.filter { $0.contains("device failure:") || $0.contains("characteristic setup failed") })")
        #expect(daemon.seenLines.contains { $0.contains("→ pairing") }, "each bonded in the pairing state")
        for line in daemon.seenLines where ProcessInfo.processInfo.environment["WEARFLEET_SHOW_LOG"] != nil { print(line) }
        #expect(await daemon.stop() == 0)
        #expect(daemon.seenLines.allSatisfy { !$0.contains("\(Self.passkey)") })
        await simulator.stop()
    }

    @Test func aWrongPasskeyIsClassifiedAndNotRetriedAtTheNextWakes() async throws {
        let setup = try await Setup(seed: 2912, devices: [Self.cuffSpec()], passkeyLine: "\(Self.cuff) 999999", scale: false)
        defer { setup.remove() }
        let (bus, simulator, passkeys) = (setup.bus, setup.simulator, setup.passkeys)
        let daemon = try DaemonProcess(bus: bus.address, files: setup.files)
        try await daemon.lines(containing: "control interface ready")
        try await daemon.lines(containing: "→ asleep", within: .seconds(60))

        #expect(await simulator.wake(address: Self.cuff))
        let gaveUp: [String]
        do {
            gaveUp = try await daemon.lines(containing: "→ suspended(gaveUp(pairing))", within: .seconds(20))
        } catch {
            for line in daemon.seenLines { print(line) }
            throw error
        }
        #expect(gaveUp.first?.contains("error_class=pairing") == true, "\(gaveUp)")
        let failure = try #require(daemon.seenLines.first { $0.contains("device failure: pairing") })
        #expect(failure.contains("org.bluez.Error.AuthenticationFailed"), "classified with bluetoothd's own error: \(failure)")
        #expect(failure.contains("pairing_failure=wrongKey"), "\(failure)")
        // It wakes twice more, advertises through a whole window and sleeps: the daemon does not
        // try the same key again.
        for _ in 0..<2 {
            #expect(await simulator.wake(address: Self.cuff, awakeFor: 1))
            try await withTimeout(.seconds(60), "the cuff's window to end") { try await simulator.waitUntilAsleep(address: Self.cuff) }
        }
        let status = try await Commands.run(Commands.wearfleetctl, ["status", "--json", "--bus", bus.address])
        let document = try #require(try JSONSerialization.jsonObject(with: Data(status.output.utf8)) as? [String: Any])
        let device = try #require((document["devices"] as? [[String: Any]])?.first)
        #expect(device["state"] as? String == "suspended" && device["stateReason"] as? String == "gaveUp(pairing)")
        #expect(device["lastError"] as? String == "pairing")
        let counters = await simulator.counterSnapshot()
        #expect(counters.pairingFailures == 1 && counters.agentRequests == 1, "one try with the wrong key, no loop")
        #expect(counters.recordsDelivered[Self.cuff, default: 0] == 0, "nothing unencrypted")
        // An operator fixes the file and asks again: it bonds at its next wake and sends everything.
        try "\(Self.cuff) \(Self.passkey)\n".write(toFile: passkeys, atomically: true, encoding: .utf8)
        let asked = try await Commands.run(Commands.wearfleetctl, ["reconnect", Self.cuff, "--bus", bus.address])
        #expect(asked.status == 0, "\(asked.errors)")
        #expect(await simulator.wake(address: Self.cuff))
        do {
            try await daemon.lines(containing: "ready → asleep", within: .seconds(60))
        } catch {
            for line in daemon.seenLines { print(line) }
            throw error
        }
        let after = await simulator.counterSnapshot()
        #expect(after.pairings[Self.cuff] == 1)
        #expect(after.recordsDelivered[Self.cuff] == after.recordsTaken[Self.cuff], "the records kept through the failed wakes, all delivered")
        #expect(await daemon.stop() == 0)
        #expect(daemon.seenLines.allSatisfy { !$0.contains("\(Self.passkey)") && !$0.contains("999999") })
        await simulator.stop()
    }
}
