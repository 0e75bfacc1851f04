import BlueZSimulator
import Fleet
import FleetCore
import Testing
import TestSupport

/// With bluetoothd and a powered adapter there, a pinned device goes straight to work: no
/// `suspended` state at start (each would be logged and signalled), and after a bluetoothd
/// restart only those its stop caused, none once it is back.
@Suite("A quiet start")
struct FleetQuietStartTests {
    static let strap = "AA:BB:CC:00:45:01"

    /// The strap's states until it is ready `times` times.
    static func states(of id: DeviceID, in changes: AsyncStream<(DeviceID, DeviceState)>, untilReady times: Int) async throws -> [DeviceState] {
        try await withTimeout(.seconds(60), "\(id) ready \(times) times") {
            var seen: [DeviceState] = []
            for await (device, state) in changes where device == id {
                seen.append(state)
                if seen.filter({ $0 == .ready }).count == times { return seen }
            }
            throw CancellationError()
        }
    }

    @Test func aPinnedDeviceIsNeverSuspendedWhenBluetoothdAndItsAdapterAreThere() async throws {
        let scenario = Scenario(
            seed: 72, adapters: [AdapterSpec(name: "hci0", slots: 2)],
            devices: [DeviceSpec(kind: .heartRateStrap, address: Self.strap, addressType: "public", bonded: true)])
        let id = try FleetSimulatorFixture.id(Self.strap)
        let configuration = FleetRuntimeConfiguration(
            pinned: [FleetRuntimeConfiguration.PinnedDevice(id: id, className: "strap")],
            classes: ["strap": FleetSimulatorFixture.strapClass()], pool: PoolConfiguration(maxConnections: 2),
            reconnect: FleetStockBlueZSimulatorTests.fastReconnect())
        let fleet = try await FleetSimulatorFixture.start(scenario, configuration, seed: 72)
        let started = try await Self.states(of: id, in: fleet.changes, untilReady: 1)
        #expect(!started.contains { if case .suspended = $0 { true } else { false } }, "\(started)")

        // bluetoothd restarts: stopping, it powers its adapter off before it leaves the bus (as
        // bluetoothd 5.66 does on SIGTERM), so the strap is suspended for each in turn; back, with
        // its adapter powered, it is not suspended again.
        try await fleet.simulator.apply(FaultCommand(.restart, seconds: 0.2))
        let restarted = try await Self.states(of: id, in: fleet.changes, untilReady: 1)
        let suspensions = restarted.filter { if case .suspended = $0 { true } else { false } }
        #expect(suspensions == [.suspended(.noPoweredAdapter), .suspended(.bluetoothdUnavailable)], "\(restarted)")
        await fleet.stop()
    }
}
