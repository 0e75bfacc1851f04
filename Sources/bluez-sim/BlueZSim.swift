import ArgumentParser
import BlueZSimulator
import DBus
import Foundation

/// `bluez-sim`: a simulated bluetoothd serving `org.bluez` on a D-Bus bus.
@main
struct BlueZSim: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "bluez-sim",
        abstract: "A simulated bluetoothd with BLE wearables and fault injection, on D-Bus.",
        discussion: """
            Serves org.bluez (BlueZ's D-Bus API) and org.wearfleet.Simulator (fault controls and counters at
            /org/wearfleet/simulator, interface org.wearfleet.Simulator1). Prints 'ready <unique-name>' on stdout
            once both names are owned. Stops on SIGINT or SIGTERM.

            With --world FILE --gateway ID --world-dir DIR it is one gateway of a world that several
            instances share: FILE is a scenario with a 'world' section (the same file, and the same --seed,
            for every gateway), DIR the directory they coordinate through. Each device then holds one link
            in the whole world, and the world's counters are in DIR/ledger.json.
            """)

    @Option(help: "The bus address (unix:path=…); the system bus when absent.")
    var bus: String?

    @Option(help: "How many wearables to simulate when no scenario is given (strap, watch, motion band in turn).")
    var devices: Int = 12

    @Option(help: "How many adapters (hci0…) for --devices.")
    var adapters: Int = 1

    @Option(help: "LE connection slots per adapter for --devices.")
    var slots: Int = 5

    @Flag(help: "--devices are new to the gateway: they appear only while discovering and expire after TemporaryTimeout (default: bonded, known from the start).")
    var unbonded = false

    @Option(help: "A JSON scenario file (adapters, devices, faults, schedule, timings).")
    var scenario: String?

    @Option(help: "A JSON scenario with a 'world' section, shared by several instances: this one plays --gateway.")
    var world: String?

    @Option(help: "The gateway of --world this instance plays (its id in world.gateways).")
    var gateway: String?

    @Option(help: "The directory the instances of --world share (created if missing): locks and ledger.json.")
    var worldDir: String?

    @Option(help: "Random seed: the same seed gives the same fleet and the same behaviour.")
    var seed: UInt64?

    @Option(help: "Multiplies every simulated delay (0.1 runs ten times faster).")
    var timeScale: Double?

    @Flag(help: "Offer BlueZ's experimental D-Bus methods (Adapter1.ConnectDevice), as bluetoothd --experimental does (default: absent, as stock Debian's bluetoothd).")
    var experimental = false

    @Option(help: "main.conf [GATT] Cache: always (stock), yes (paired devices only) or no.")
    var gattCache: String?

    @Flag(help: "Millisecond latencies (for tests).")
    var fast = false

    func validate() throws {
        guard world == nil || scenario == nil else { throw ValidationError("--world is a scenario of its own: give --world or --scenario") }
        guard (world == nil) == (gateway == nil), (world == nil) == (worldDir == nil) else {
            throw ValidationError("--world, --gateway and --world-dir go together")
        }
    }

    mutating func run() async throws {
        var plan: Scenario
        var worldGateway: WorldGateway?
        if let world, let gateway, let worldDir {
            plan = try Scenario.load(from: URL(fileURLWithPath: world))
            worldGateway = WorldGateway(id: gateway, world: try SharedWorld(directory: URL(fileURLWithPath: worldDir)))
        } else if let scenario {
            plan = try Scenario.load(from: URL(fileURLWithPath: scenario))
        } else {
            plan = Scenario.quick(devices: devices, adapters: adapters, slots: slots, bonded: !unbonded)
        }
        if let seed { plan.seed = seed }
        if experimental || gattCache != nil {
            var settings = plan.bluez ?? BlueZSettings()
            if experimental { settings.experimental = true }
            if let gattCache {
                guard let cache = BlueZSettings.GATTCache(rawValue: gattCache) else {
                    throw ValidationError("--gatt-cache must be always, yes or no")
                }
                settings.gattCache = cache
            }
            plan.bluez = settings
        }
        var timings = fast ? SimulatorTimings.fast : (plan.timings ?? SimulatorTimings())
        if let timeScale { timings.timeScale = timeScale }
        let address: BusAddress = bus.map { .address($0) } ?? .system
        let simulator = try BlueZSimulator(scenario: plan, bus: address, timings: timings, worldGateway: worldGateway)
        try await simulator.start()
        FileHandle.standardOutput.write(Data("ready \(await simulator.uniqueName ?? "")\n".utf8))
        await Self.waitForTermination()
        await simulator.stop()
    }

    /// Returns on SIGINT or SIGTERM (ignored as signals, then observed by dispatch sources).
    static func waitForTermination() async {
        signal(SIGINT, SIG_IGN)
        signal(SIGTERM, SIG_IGN)
        let (stream, continuation) = AsyncStream<Int32>.makeStream()
        let sources = [SIGINT, SIGTERM].map { number in
            let source = DispatchSource.makeSignalSource(signal: number, queue: .global())
            source.setEventHandler { continuation.yield(number) }
            source.resume()
            return source
        }
        // The sources must outlive the wait: a released source stops firing.
        for await _ in stream { break }
        for source in sources { source.cancel() }
    }
}
