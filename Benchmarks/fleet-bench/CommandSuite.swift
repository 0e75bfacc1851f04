import BlueZSimulator
import DBus
import Foundation
import ProcessSupport

/// Section "commands": the round trip of `org.wearfleet.Daemon1.Write` (with response) through
/// the real `wearfleetd`, next to the very same `GattCharacteristic1.WriteValue` called directly
/// on bluez-sim, one call in flight at a time, the two interleaved call by call so both see the
/// same machine. The difference is what the daemon adds: the caller's uid asked of the bus,
/// the device's queue and lane, its own WriteValue call and the answer.
struct CommandSuite {
    let options: Options
    let directory: URL

    static let warmUp = 20
    static let writes = 500
    /// Opcode 3 asks the band for its status: a write the band takes without changing its stream.
    static let value: [UInt8] = [0x03]

    func run() throws -> CommandResult {
        log("commands: \(Self.writes) Write round trips through wearfleetd and as many WriteValue calls on bluez-sim")
        var timings = SimulatorTimings()
        timings.timeScale = options.timeScale
        let scenario = Scenario(
            seed: 31, timings: timings, adapters: [AdapterSpec(name: "hci0", slots: 5)],
            devices: [DeviceSpec(kind: .motionBand, count: 1, bonded: true, mtu: 247, notifyHz: 1)])
        let fleet = try SimulatedFleet(scenario: scenario, simulatorPath: options.simulator, directory: directory, name: "commands")
        defer { fleet.stop() }
        let address = fleet.addresses[0]
        var configuration = DaemonConfiguration(
            pinned: [(address, "random")],
            deviceClass: .init(name: "band", requiredServices: [BenchUUIDs.motionService]),
            maxConnections: 1, slotsPerAdapter: 5, attemptBurst: 4, attemptInterval: options.attemptInterval)
        configuration.metricsPort = 19_481
        let (config, state) = try configuration.write(to: directory, name: "commands")
        let daemon = try DaemonProcess(
            executable: options.wearfleetd, bus: fleet.bus.address, config: config, stateDirectory: state,
            directory: directory, name: "commands")
        defer { daemon.stop() }
        _ = try daemon.waitForReady(within: 60)
        _ = try daemon.waitUntilReady([address], within: 60)

        let bus = fleet.bus.address
        let (viaDaemon, direct) = try runBlocking { () async throws -> ([Double], [Double]) in
            let connection = try await DBusConnection.connect(to: .address(bus), threadName: "bench-commands")
            do {
                let figures = try await Self.measure(address: address, on: connection)
                await connection.close()
                return figures
            } catch {
                await connection.close()
                throw error
            }
        }
        return CommandResult(
            writes: Self.writes, simulatedWriteLatencyMilliseconds: timings.writeLatency * options.timeScale * 1000,
            daemonP50Milliseconds: Self.percentile(viaDaemon, 0.50) * 1000, daemonP99Milliseconds: Self.percentile(viaDaemon, 0.99) * 1000,
            directP50Milliseconds: Self.percentile(direct, 0.50) * 1000, directP99Milliseconds: Self.percentile(direct, 0.99) * 1000)
    }

    /// Seconds each call took, through the daemon and directly, interleaved call by call.
    static func measure(address: String, on connection: DBusConnection) async throws -> ([Double], [Double]) {
        let characteristic = try await Self.controlCharacteristic(of: address, on: connection)
        func throughDaemon() async throws -> Double {
            let start = MonotonicTime.seconds
            let reply = try await connection.call(
                destination: "org.wearfleet.Daemon", path: "/org/wearfleet/Daemon", interface: "org.wearfleet.Daemon1",
                member: "Write",
                [.string(address), .string(BenchUUIDs.motionControl), .bytes(Self.value), .stringVariantMap([:])],
                timeout: .seconds(30))
            let elapsed = MonotonicTime.seconds - start
            guard reply.first == .string("acknowledged") else { throw BenchError("Write answered \(reply)") }
            return elapsed
        }
        func directly() async throws -> Double {
            let start = MonotonicTime.seconds
            _ = try await connection.call(
                destination: "org.bluez", path: characteristic, interface: "org.bluez.GattCharacteristic1", member: "WriteValue",
                [.bytes(Self.value), .stringVariantMap(["type": .string("request")])], timeout: .seconds(30))
            return MonotonicTime.seconds - start
        }
        for _ in 0..<Self.warmUp {
            _ = try await throughDaemon()
            _ = try await directly()
        }
        var viaDaemon: [Double] = []
        var direct: [Double] = []
        for _ in 0..<Self.writes {
            viaDaemon.append(try await throughDaemon())
            direct.append(try await directly())
        }
        return (viaDaemon, direct)
    }

    /// The band's control point object, found in bluetoothd's objects.
    static func controlCharacteristic(of address: String, on connection: DBusConnection) async throws -> DBusObjectPath {
        let reply = try await connection.call(
            destination: "org.bluez", path: "/", interface: "org.freedesktop.DBus.ObjectManager", member: "GetManagedObjects",
            timeout: .seconds(30))
        let objects = try reply.decode([DBusObjectPath: [String: [String: DBusValue]]].self, at: 0)
        let devicePart = "dev_" + address.replacingOccurrences(of: ":", with: "_")
        for (path, interfaces) in objects where path.rawValue.contains(devicePart) {
            if case .string(let uuid)? = interfaces["org.bluez.GattCharacteristic1"]?["UUID"]?.unwrappingVariant,
                uuid == BenchUUIDs.motionControl
            {
                return path
            }
        }
        throw BenchError("bluez-sim shows no control point for \(address)")
    }

    static func percentile(_ values: [Double], _ fraction: Double) -> Double {
        guard !values.isEmpty else { return .nan }
        let sorted = values.sorted()
        return sorted[min(sorted.count - 1, Int((Double(sorted.count - 1) * fraction).rounded()))]
    }
}

/// The commands section's figures (milliseconds).
struct CommandResult: Codable {
    var writes: Int
    /// What the simulator itself takes to acknowledge a write with response (scaled).
    var simulatedWriteLatencyMilliseconds: Double
    var daemonP50Milliseconds: Double
    var daemonP99Milliseconds: Double
    var directP50Milliseconds: Double
    var directP99Milliseconds: Double
}
