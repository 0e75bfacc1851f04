import BlueZSimulator
import DBus
import FleetControl
import Foundation
import Testing
import TestSupport

/// The daemon's pairing agent and `wearfleetctl pair|unpair`, end to end: the real daemon with
/// `[pairing]` and a passkeys file, bluez-sim with a cuff that displays a passkey and a scale
/// that pairs Just Works.
@Suite("wearfleetd pairs with its agent", .serialized)
struct WearfleetdPairingTests {
    static let cuff = "AA:BB:CC:00:29:01"
    static let scale = "AA:BB:CC:00:29:02"
    static let passkey: UInt32 = 246_810

    @Test func pairAnswersWithThePasskeysFileAndAWrongKeyIsRefused() async throws {
        let bus = try PrivateBus()
        let simulator = try BlueZSimulator(
            scenario: Scenario(
                seed: 29, adapters: [AdapterSpec(name: "hci0", slots: 5)],
                devices: [
                    DeviceSpec(kind: .heartRateStrap, address: Self.cuff, addressType: "public", pairing: .passkey, passkey: Self.passkey),
                    DeviceSpec(kind: .heartRateStrap, address: Self.scale, addressType: "public"),
                ]),
            bus: .address(bus.address), timings: .fast)
        try await simulator.start()
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("wearfleet-passkeys-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let passkeys = directory.appendingPathComponent("passkeys").path
        try "# the cuff's passkey\n\(Self.cuff) \(Self.passkey)\n".write(toFile: passkeys, atomically: true, encoding: .utf8)
        let files = try DaemonFiles(
            pinned: [Self.cuff, Self.scale], extra: "\n[pairing]\ncapability = \"KeyboardDisplay\"\npasskeys_file = \"\(passkeys)\"\n")
        defer { files.remove() }
        let daemon = try DaemonProcess(bus: bus.address, files: files)
        try await daemon.lines(containing: "control interface ready")
        try await daemon.lines(containing: "pairing agent registered")
        try await daemon.lines(containing: "→ ready", count: 2, within: .seconds(60))

        // The cuff asks for its passkey; the agent has it.
        let paired = try await Commands.run(Commands.wearfleetctl, ["pair", Self.cuff, "--bus", bus.address])
        #expect(paired.status == 0, "\(paired.errors)")
        var counters = await simulator.counterSnapshot()
        #expect(counters.pairings[Self.cuff] == 1 && counters.agentRequests == 1)
        // Bonded already: bluetoothd's answer.
        let again = try await Commands.run(Commands.wearfleetctl, ["pair", Self.cuff, "--bus", bus.address])
        #expect(again.status == ControlClientError.ExitCode.failure && again.errors.contains("AlreadyExists"), "\(again.errors)")

        // Just Works asks the agent nothing.
        let scale = try await Commands.run(Commands.wearfleetctl, ["pair", Self.scale, "--bus", bus.address])
        #expect(scale.status == 0, "\(scale.errors)")
        counters = await simulator.counterSnapshot()
        #expect(counters.pairings[Self.scale] == 1 && counters.agentRequests == 1)

        // Nobody but bluetoothd gets a passkey out of the agent.
        let intruder = try await DBusConnection.connect(to: .address(bus.address), threadName: "intruder")
        let cuffPath = try #require(await simulator.devicePath(of: Self.cuff))
        let agentOwner = try #require(await simulator.agentOwners.first, "the daemon's agent is registered")
        await #expect {
            _ = try await intruder.call(
                destination: agentOwner, path: "/org/wearfleet/PairingAgent", interface: "org.bluez.Agent1",
                member: "RequestPasskey", [.objectPath(cuffPath)])
        } throws: { ($0 as? DBusError)?.name == "org.bluez.Error.Rejected" }
        await intruder.close()

        // With a wrong passkey in the file (read again at each request), a pairing is refused with
        // bluetoothd's AuthenticationFailed: the cuff forgets its bond here (as after a reset).
        #expect(await simulator.forgetBond(address: Self.cuff))
        try "\(Self.cuff) 111111\n".write(toFile: passkeys, atomically: true, encoding: .utf8)
        let wrong = try await Commands.run(Commands.wearfleetctl, ["pair", Self.cuff, "--bus", bus.address])
        #expect(wrong.status == ControlClientError.ExitCode.failure && wrong.errors.contains("AuthenticationFailed"), "\(wrong.errors)")
        #expect(await simulator.counterSnapshot().pairingFailures == 1)

        // Unpaired, the scale's objects go (bluetoothd's only unpairing) and it is found again,
        // unbonded, and connected as before.
        let scaleReady = "→ ready adapter=hci0 device_address=\(Self.scale)"
        let readyBefore = daemon.seenLines.filter { $0.contains(scaleReady) }.count
        let unpaired = try await Commands.run(Commands.wearfleetctl, ["unpair", Self.scale, "--bus", bus.address])
        #expect(unpaired.status == 0, "\(unpaired.errors)")
        do {
            try await daemon.lines(containing: scaleReady, count: readyBefore + 1, within: .seconds(90))
        } catch {
            print("unpair: \(await simulator.linkSummary(of: Self.scale)); counters \(await simulator.counterSnapshot())")
            for line in daemon.seenLines.suffix(60) { print(line) }
            throw error
        }
        #expect(await simulator.counterSnapshot().pairings[Self.scale] == 1, "found again unbonded: not paired again")

        #expect(await daemon.stop() == 0)
        // A passkey is never logged.
        #expect(!daemon.seenLines.isEmpty)
        #expect(daemon.seenLines.allSatisfy { !$0.contains("\(Self.passkey)") && !$0.contains("111111") })
        await simulator.stop()
    }
}
