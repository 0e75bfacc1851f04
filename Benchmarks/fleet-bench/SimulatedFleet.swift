import BlueZSimulator
import DBus
import Foundation
import ProcessSupport

/// A private dbus-daemon with `bluez-sim` serving a scenario on it, plus a connection of the
/// benchmark's own for the simulator's control interface (load, faults, counters).
///
/// bluez-sim runs as a process of its own so that its CPU time is its own (reported next to
/// the receivers', since it shares the machine's cores with them).
final class SimulatedFleet {
    let bus: PrivateBus
    let simulator: ChildProcess
    let control: DBusConnection
    let scenario: Scenario
    /// Every device's address, in scenario order.
    let addresses: [String]
    /// Every device's adapter (`hci0`…), in scenario order.
    let adapters: [String]
    let directory: URL

    init(scenario: Scenario, simulatorPath: String, directory: URL, name: String) throws {
        self.scenario = scenario
        self.directory = directory
        let devices = try scenario.resolved().devices
        addresses = devices.map(\.address)
        adapters = devices.map(\.adapter)
        let file = directory.appendingPathComponent("\(name)-scenario.json")
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.prettyPrinted, .sortedKeys]
        try encoder.encode(scenario).write(to: file)
        bus = try PrivateBus()
        simulator = try ChildProcess(
            simulatorPath, ["--bus", bus.address, "--scenario", file.path],
            stderrPath: directory.appendingPathComponent("\(name)-bluez-sim.log").path)
        // 1,000 devices take a while to export.
        let line = try simulator.readLine(within: 120)
        guard line.hasPrefix("ready") else { throw BenchError("bluez-sim printed '\(line)' instead of 'ready'") }
        let address = bus.address
        control = try runBlocking { try await DBusConnection.connect(to: .address(address), threadName: "bench-control") }
    }

    func stop() {
        let control = self.control
        _ = try? runBlocking { await control.close() }
        simulator.terminate()
        bus.stop()
    }

    // MARK: - org.wearfleet.Simulator1

    @discardableResult
    private func call(_ member: String, _ body: [DBusValue] = []) throws -> [DBusValue] {
        let control = self.control
        return try runBlocking {
            try await control.call(
                destination: BlueZSimulator.controlName, path: BlueZSimulator.controlPath,
                interface: SimulatorControl.interfaceName, member: member, body, timeout: .seconds(30))
        }
    }

    func setMotionStream(rateHz: Double, payloadSize: Int) throws {
        try call("SetMotionStream", [.string(""), .double(rateHz), .uint32(UInt32(payloadSize))])
    }

    func restartBluetoothd(downSeconds: Double) throws {
        try call("RestartBluetoothd", [.double(downSeconds)])
    }

    func resetCounters() throws { try call("ResetCounters") }

    /// Total notifications sent (both paths) since the last reset.
    func notificationsSent() throws -> UInt64 {
        let counters = try call("GetCounters").decode([String: DBusValue].self, at: 0)
        return try counters.decodeIfPresent(UInt64.self, forKey: "TotalNotificationsSent") ?? 0
    }

    /// A per-adapter or per-device counter map (`a{su}`), e.g. `MaxConcurrentAttempts`.
    func counterMap(_ name: String) throws -> [String: Int] {
        let counters = try call("GetCounters").decode([String: DBusValue].self, at: 0)
        guard let map = try counters.decodeIfPresent([String: UInt32].self, forKey: name) else { return [:] }
        return map.mapValues(Int.init)
    }

    /// Whether any adapter is discovering (someone asked bluetoothd to scan).
    func anyAdapterDiscovering() throws -> Bool {
        let control = self.control
        let names = Set(adapters)
        return try runBlocking {
            for name in names.sorted() {
                let reply = try await control.call(
                    destination: "org.bluez", path: try DBusObjectPath("/org/bluez/\(name)"),
                    interface: "org.freedesktop.DBus.Properties", member: "Get",
                    [.string("org.bluez.Adapter1"), .string("Discovering")], timeout: .seconds(30))
                if try reply.decode(DBusValue.self, at: 0) == .boolean(true) { return true }
            }
            return false
        }
    }

    func counter(_ name: String) throws -> UInt64 {
        let counters = try call("GetCounters").decode([String: DBusValue].self, at: 0)
        return try counters.decodeIfPresent(UInt64.self, forKey: name) ?? 0
    }
}
