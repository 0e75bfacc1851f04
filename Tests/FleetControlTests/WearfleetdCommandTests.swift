import BlueZSimulator
import DBus
import Fleet
import FleetControl
import Foundation
import Testing
import TestSupport

/// The commands of `org.wearfleet.Daemon1` end to end: the real daemon (as root, so its own
/// access check lets the caller through), the simulated bluetoothd and `wearfleetctl` on one
/// private bus.
@Suite("wearfleetd's commands end to end")
struct WearfleetdCommandTests {
    static let straps = ["AA:BB:CC:00:60:01", "AA:BB:CC:00:60:02"]
    static let band = "C4:7A:10:00:60:03"
    static let bandControl = "7a1e0003-3c6f-4b8d-9e2a-5d0c8f6b1a40"
    /// The band, pinned by the file; its bulk queue holds nothing, so a bulk write is refused
    /// `QueueFull` every time. No pool: the spare strap is in the fleet only when pinned.
    static let bandConfiguration = """

        [pool]
        enabled = false

        [classes.band]
        required_services = ["7a1e0001-3c6f-4b8d-9e2a-5d0c8f6b1a40"]
        subscribe = ["7a1e0002-3c6f-4b8d-9e2a-5d0c8f6b1a40"]

        [classes.band.queue_depth]
        bulk = 0

        [[pinned]]
        address = "\(band)"
        address_type = "random"
        name = "band"
        class = "band"

        """

    struct Setup {
        let bus: PrivateBus
        let simulator: BlueZSimulator
        let files: DaemonFiles
    }

    static func setUp() async throws -> Setup {
        let bus = try PrivateBus()
        let scenario = Scenario(
            seed: 17, adapters: [AdapterSpec(name: "hci0", slots: 5)],
            devices: straps.map { DeviceSpec(kind: .heartRateStrap, address: $0, addressType: "public", bonded: true) }
                + [DeviceSpec(kind: .motionBand, address: band, addressType: "random", bonded: true, mtu: 247, notifyHz: 5)])
        let simulator = try BlueZSimulator(scenario: scenario, bus: .address(bus.address), timings: .fast)
        try await simulator.start()
        // The first strap and the band are pinned by the file; the second strap is not.
        let files = try DaemonFiles(pinned: [straps[0]], extra: bandConfiguration)
        return Setup(bus: bus, simulator: simulator, files: files)
    }

    static func daemon(_ setup: Setup) throws -> DaemonProcess {
        try DaemonProcess(bus: setup.bus.address, files: setup.files)
    }

    /// The daemon started, its control interface up and both devices the file pins (the first
    /// strap and the band) ready.
    static func readyDaemon(_ setup: Setup) async throws -> DaemonProcess {
        let daemon = try Self.daemon(setup)
        try await daemon.lines(containing: "control interface ready")
        try await daemon.lines(containing: "→ ready", count: 2, within: .seconds(30))
        return daemon
    }

    static func ctl(_ setup: Setup, _ arguments: [String]) async throws -> Commands.Result {
        try await Commands.run(Commands.wearfleetctl, arguments + ["--bus", setup.bus.address])
    }

    /// What the daemon logs when `address` becomes ready.
    static func ready(_ address: String) -> String { "→ ready adapter=hci0 device_address=\(address)" }

    static func json(_ text: String) throws -> [String: Any] {
        try #require(try JSONSerialization.jsonObject(with: Data(text.utf8)) as? [String: Any])
    }

    @Test func aRuntimePinBecomesReadyIsSavedAndIsStillPinnedAfterARestart() async throws {
        let setup = try await Self.setUp()
        defer { setup.files.remove() }
        let spare = Self.straps[1]
        var daemon = try await Self.readyDaemon(setup)

        let pin = try await Self.ctl(setup, ["pin", spare, "--class", "strap", "--name", "spare", "--priority", "3", "--json"])
        #expect(pin.status == 0, "\(pin.errors)")
        let answer = try Self.json(pin.output)
        #expect(answer["command"] as? String == "pin" && answer["ok"] as? Bool == true && answer["address"] as? String == spare)
        try await daemon.lines(containing: Self.ready(spare), within: .seconds(30))
        let saved = try String(contentsOfFile: setup.files.state + "/runtime-pins.json", encoding: .utf8)
        #expect(saved.contains(spare) && saved.contains("wearfleet-runtime-pins"))
        #expect(!saved.contains(Self.straps[0]), "the file's pins are not copied into the runtime pins")

        // A reload (SIGHUP, as systemctl reload sends it) keeps the run-time pin.
        daemon.child.signal(SIGHUP)
        try await daemon.lines(containing: "configuration reloaded")
        let reloaded = try Self.json(try await Self.ctl(setup, ["device", spare, "--json"]).output)
        #expect(reloaded["pinned"] as? Bool == true && reloaded["state"] as? String == "ready")

        // A new daemon over the same state directory pins it again and connects it.
        #expect(await daemon.stop() == 0)
        daemon = try Self.daemon(setup)
        try await daemon.lines(containing: "runtime pins loaded")
        try await daemon.lines(containing: Self.ready(spare), within: .seconds(30))
        let device = try await Self.ctl(setup, ["device", spare, "--json"])
        let restored = try Self.json(device.output)
        #expect(restored["pinned"] as? Bool == true && restored["state"] as? String == "ready" && restored["name"] as? String == "spare")

        // The file's pin cannot be undone at run time: the refusal names the line that pins it.
        let refused = try await Self.ctl(setup, ["unpin", Self.straps[0]])
        #expect(refused.status == ControlClientError.ExitCode.failure)
        #expect(refused.errors.contains("PinnedByConfiguration") && refused.errors.contains("wearfleetd.toml:8"), "\(refused.errors)")

        let unpin = try await Self.ctl(setup, ["unpin", spare])
        #expect(unpin.status == 0, "\(unpin.errors)")
        #expect(unpin.output == "unpinned \(spare)")
        let emptied = try String(contentsOfFile: setup.files.state + "/runtime-pins.json", encoding: .utf8)
        #expect(!emptied.contains(spare))
        #expect(await daemon.stop() == 0)
        await setup.simulator.stop()
    }

    /// As `systemctl stop` does with `TimeoutStopSec=20s`: SIGTERM, SIGKILL after 20 s. With
    /// every `Disconnect` unanswered, the daemon gives its disconnects up after their bound, exits
    /// by itself, and the state file and the run-time pins are on disk.
    @Test func aStopWhileBluetoothdAnswersNoDisconnectEndsInTimeWithEverythingSaved() async throws {
        let setup = try await Self.setUp()
        defer { setup.files.remove() }
        let spare = Self.straps[1]
        let daemon = try await Self.readyDaemon(setup)
        let pin = try await Self.ctl(setup, ["pin", spare, "--class", "strap"])
        #expect(pin.status == 0, "\(pin.errors)")
        try await daemon.lines(containing: Self.ready(spare), within: .seconds(30))
        try await setup.simulator.apply(FaultCommand(.disconnectDelay, seconds: 3600))

        #expect(await daemon.stop(within: .seconds(20)) == 0, "it exited by itself, before systemd's SIGKILL")
        try await daemon.lines(containing: "stop_disconnect_timeout")
        let known = try String(contentsOfFile: setup.files.state + "/known-devices.json", encoding: .utf8)
        for address in Self.straps + [Self.band] { #expect(known.contains(address), "\(address) in the state file") }
        let pins = try String(contentsOfFile: setup.files.state + "/runtime-pins.json", encoding: .utf8)
        #expect(pins.contains(spare))
        await setup.simulator.stop()
    }

    @Test func aWriteWithResponseReachesTheDeviceAndReadsAnswerTheValue() async throws {
        let setup = try await Self.setUp()
        defer { setup.files.remove() }
        let daemon = try await Self.readyDaemon(setup)
        await setup.simulator.resetCounters()

        // Opcode 1 sets the band's motion rate (25 Hz): acknowledged by the device.
        let write = try await Self.ctl(setup, ["write", Self.band, Self.bandControl, "011900", "--json"])
        #expect(write.status == 0, "\(write.errors)")
        let answer = try Self.json(write.output)
        #expect(answer["outcome"] as? String == "acknowledged" && answer["bytes"] as? Int == 3)
        #expect(await setup.simulator.counterSnapshot().writesReceived[Self.band] == 1, "the write reached the simulated band")

        let command = try await Self.ctl(setup, ["write", Self.band, Self.bandControl, "03", "--without-response", "--qos", "control"])
        #expect(command.status == 0, "\(command.errors)")
        #expect(command.output == "sent: 1 byte to \(Self.bandControl) of \(Self.band)")

        let read = try await Self.ctl(setup, ["read", Self.straps[0], "2a19"])
        #expect(read.status == 0, "\(read.errors)")
        #expect(read.output == "57", "the strap's battery, 87 %")

        // Disconnect holds the strap (nothing can be read from it), Reconnect brings it back.
        let disconnect = try await Self.ctl(setup, ["disconnect", Self.straps[0]])
        #expect(disconnect.status == 0, "\(disconnect.errors)")
        try await daemon.lines(containing: "ready → idle", within: .seconds(30))
        let held = try await Self.ctl(setup, ["read", Self.straps[0], "2a19"])
        #expect(held.status == ControlClientError.ExitCode.failure && held.errors.contains("NotConnected"), "\(held.errors)")
        let reconnect = try await Self.ctl(setup, ["reconnect", Self.straps[0], "--json"])
        #expect(reconnect.status == 0, "\(reconnect.errors)")
        #expect(try Self.json(reconnect.output)["command"] as? String == "reconnect")
        try await daemon.lines(containing: Self.ready(Self.straps[0]), count: 2, within: .seconds(30))
        let again = try await Self.ctl(setup, ["read", Self.straps[0], "2a19"])
        #expect(again.output == "57", "\(again.errors)")
        #expect(await daemon.stop() == 0)
        await setup.simulator.stop()
    }

    @Test func subscribeAndUnsubscribeReachTheFleetAndNameTheirRefusals() async throws {
        let setup = try await Self.setUp()
        defer { setup.files.remove() }
        let daemon = try await Self.readyDaemon(setup)
        let strap = Self.straps[0]
        let off = try await Self.ctl(setup, ["unsubscribe", strap, "2a37"])
        #expect(off.status == 0, "\(off.errors)")
        #expect(off.output == "unsubscribed from 2a37 of \(strap)")
        let again = try await Self.ctl(setup, ["unsubscribe", strap, "2a37"])
        #expect(again.status == ControlClientError.ExitCode.failure && again.errors.contains("NotSubscribed"), "\(again.errors)")
        let on = try await Self.ctl(setup, ["subscribe", strap, "2a37", "--json"])
        #expect(on.status == 0, "\(on.errors)")
        let answer = try Self.json(on.output)
        #expect(answer["command"] as? String == "subscribe" && answer["uuid"] as? String == "2a37" && answer["ok"] as? Bool == true)
        let twice = try await Self.ctl(setup, ["subscribe", strap, "2a37"])
        #expect(twice.status == ControlClientError.ExitCode.failure && twice.errors.contains("AlreadySubscribed"), "\(twice.errors)")
        #expect(await daemon.stop() == 0)
        await setup.simulator.stop()
    }

    @Test func everyBadInputHasItsNamedErrorAndChangesNothing() async throws {
        let setup = try await Self.setUp()
        defer { setup.files.remove() }
        let daemon = try await Self.readyDaemon(setup)
        let connection = try await DBusConnection.connect(to: .address(setup.bus.address), threadName: "command-test")
        func call(_ member: String, _ arguments: [DBusValue]) async -> String? {
            do {
                _ = try await connection.call(
                    destination: WearfleetControl.busName, path: WearfleetControl.objectPath,
                    interface: WearfleetControl.interfaceName, member: member, arguments, timeout: .seconds(25))
                return nil
            } catch let error as DBusError {
                return error.name
            } catch {
                return "\(error)"
            }
        }
        let strap = Self.straps[0]
        let band = Self.band
        let none: DBusValue = .stringVariantMap([:])
        let before = try await Self.ctl(setup, ["status", "--json"])
        await setup.simulator.resetCounters()
        let names = WearfleetControl.ErrorName.self

        #expect(await call("Read", [.string("AA:BB:CC:00:60:99"), .string("2a19")]) == names.unknownDevice)
        #expect(await call("Disconnect", [.string("AA:BB:CC:00:60:99")]) == names.unknownDevice)
        #expect(await call("Pin", [.string("not an address"), none]) == names.invalidAddress)
        #expect(await call("Read", [.string(strap), .string("2a1")]) == names.invalidUUID)
        #expect(await call("Write", [.string(band), .string("zz"), .bytes([1]), none]) == names.invalidUUID)
        // Heart rate measurement notifies, it cannot be read; body sensor location cannot be written.
        #expect(await call("Read", [.string(strap), .string("2a37")]) == names.notSupported)
        #expect(await call("Write", [.string(strap), .string("2a38"), .bytes([1]), none]) == names.notSupported)
        #expect(await call("Read", [.string(strap), .string("2a1c")]) == names.unknownCharacteristic)
        #expect(await call("Write", [.string(band), .string(Self.bandControl), .bytes(Array(repeating: 0, count: 513)), none]) == names.tooLarge)
        #expect(await call("Write", [.string(band), .string(Self.bandControl), .bytes([3]), .stringVariantMap(["qos": .string("bulk")])]) == names.queueFull)
        #expect(await call("Write", [.string(band), .string(Self.bandControl), .bytes([3]), .stringVariantMap(["qos": .string("urgent")])]) == names.invalidOption)
        #expect(await call("Write", [.string(band), .string(Self.bandControl), .bytes([3]), .stringVariantMap(["retries": .int32(3)])]) == names.invalidOption)
        #expect(await call("Pin", [.string(Self.straps[1]), .stringVariantMap(["class": .string("nonesuch")])]) == names.unknownClass)
        #expect(await call("Pin", [.string(Self.straps[1]), .stringVariantMap(["priority": .string("high")])]) == names.invalidOption)
        #expect(await call("Pin", [.string(strap), none]) == names.pinnedByConfiguration)
        #expect(await call("Unpin", [.string(Self.straps[1])]) == names.unknownDevice)
        #expect(await call("Unpin", [.string(band)]) == names.pinnedByConfiguration)
        // The wrong argument types are the bus's own error.
        #expect(await call("Read", [.string(strap)]) == DBusError.invalidArgs)

        // Nothing changed: no write reached the band, no pin was saved, the fleet reads the same.
        #expect(await setup.simulator.counterSnapshot().totalWritesReceived == 0)
        #expect(!FileManager.default.fileExists(atPath: setup.files.state + "/runtime-pins.json"))
        let after = try await Self.ctl(setup, ["status", "--json"])
        let devices = { (text: String) throws -> [String] in
            ((try Self.json(text)["devices"] as? [[String: Any]]) ?? []).map { "\($0["address"] ?? "") \($0["pinned"] ?? "") \($0["state"] ?? "")" }
        }
        #expect(try devices(after.output) == devices(before.output))

        // wearfleetctl: exit codes and messages for the same refusals.
        let unknown = try await Self.ctl(setup, ["read", "AA:BB:CC:00:60:99", "2a19"])
        #expect(unknown.status == ControlClientError.ExitCode.unknownDevice)
        let badHex = try await Self.ctl(setup, ["write", band, Self.bandControl, "0g"])
        #expect(badHex.status == ControlClientError.ExitCode.usage && badHex.errors.contains("invalid value '0g'"))
        let full = try await Self.ctl(setup, ["write", band, Self.bandControl, "03", "--qos", "bulk"])
        #expect(full.status == ControlClientError.ExitCode.failure && full.errors.contains("QueueFull"), "\(full.errors)")
        let unreadable = try await Self.ctl(setup, ["read", strap, "2a37"])
        #expect(unreadable.status == ControlClientError.ExitCode.failure && unreadable.errors.contains("does not allow read"))

        await connection.close()
        #expect(await daemon.stop() == 0)
        await setup.simulator.stop()
    }
}
