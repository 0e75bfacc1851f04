import DBus
import Foundation
import GATT

/// A simulated bluetoothd: serves `org.bluez` on a D-Bus bus with BlueZ's object tree
/// (ObjectManager at `/`, `Adapter1` at `/org/bluez/hciN`, `Device1` and the GATT objects below),
/// plays wearables that advertise, connect, resolve services and notify, and injects faults.
///
/// Guarantees:
/// - Names, types, flags, error names and error texts follow BlueZ's D-Bus API documentation.
/// - All state lives in this actor; D-Bus handlers only forward to it. Delayed work (connection
///   latency, resolution, link loss, notification streams) is tied to a device's link epoch and
///   gives up when the link changed meanwhile.
/// - Given the same scenario and seed, each device draws the same random sequence.
/// - A fault control interface (`org.wearfleet.Simulator1`, see `SimulatorControl`) lives on a
///   second bus connection named `org.wearfleet.Simulator`, so it survives a simulated
///   bluetoothd restart.
public actor BlueZSimulator {
    public static let serviceName = "org.bluez"
    public static let controlName = "org.wearfleet.Simulator"
    public static let controlPath: DBusObjectPath = "/org/wearfleet/simulator"

    let bus: BusAddress
    public nonisolated let timings: SimulatorTimings
    /// bluetoothd's configurable behaviour (stock unless the scenario says otherwise).
    public nonisolated let settings: BlueZSettings
    var connection: DBusConnection?
    var controlConnection: DBusConnection?
    var adapters: [String: SimulatedAdapter] = [:]
    let adapterNames: [String]
    var devices: [String: SimulatedDevice] = [:]
    let deviceAddresses: [String]
    /// Passers-by in the simulator now (in range, or gone with an object or link left), in
    /// arrival order.
    var passerByAddresses: [String] = []
    let passersBy: PassersBy?
    let passersBySeed: UInt64
    /// The scenario's devices and the passers-by here now.
    var everyAddress: [String] { passerByAddresses.isEmpty ? deviceAddresses : deviceAddresses + passerByAddresses }
    var fleetFaults: FaultSettings
    var counters = SimulatorCounters()
    /// Pairing agents by their client's unique name, and bluetoothd's queue of default agents by
    /// client, the default first (src/agent.c `default_agents`).
    var agents: [String: RegisteredAgent] = [:]
    var defaultAgentOwners: [String] = []
    /// `Connect` calls waiting for a sleeping device to wake, by device and waiter id.
    var wakeWaiters: [String: [Int: CheckedContinuation<Void, Never>]] = [:]
    var nextWakeWaiter = 0
    /// Callers of `waitUntilAsleep(address:)`, by device and id, until the device sleeps.
    var sleepWaiters: [String: [Int: CheckedContinuation<Void, any Error>]] = [:]
    var nextSleepWaiter = 0
    /// Callers of `waitForNotificationsSent(reaching:)`, by id, until their total is sent.
    var notificationWaiters: [Int: NotificationWaiter] = [:]
    var nextNotificationWaiter = 0
    let schedule: [ScheduledFault]
    var backgroundTasks: [Task<Void, Never>] = []
    var clientWatchTask: Task<Void, Never>?
    var started = false
    /// How many times bluetoothd "restarted" (for the control interface and tests).
    var restarts = 0
    /// The gateway of a shared world this instance plays (nil: a world of its own), its place
    /// there while it runs, and who hears whom in that world (address → gateway → RSSI given).
    public nonisolated let worldGateway: WorldGateway?
    var worldMembership: WorldMembership?
    let worldHearing: [String: [String: Int]]

    /// Builds the fleet; nothing touches the bus (or the world directory) until `start()`.
    /// `timings` overrides the scenario's own. With `worldGateway`, the instance is that gateway of
    /// the scenario's `world`: it simulates that gateway's adapters and the devices it hears, and
    /// shares each device's one link with the world's other instances (`SharedWorld`).
    public init(scenario: Scenario, bus: BusAddress, timings: SimulatorTimings? = nil, worldGateway: WorldGateway? = nil) throws {
        self.bus = bus
        let timings = timings ?? scenario.timings ?? SimulatorTimings()
        self.timings = timings
        settings = scenario.bluez ?? BlueZSettings()
        let adapterConfigs: [AdapterConfiguration]
        let deviceConfigs: [WearableConfiguration]
        if let worldGateway {
            let resolved = try scenario.resolved(forGateway: worldGateway.id)
            (adapterConfigs, deviceConfigs) = (resolved.adapters, resolved.devices)
            worldHearing = resolved.hearing
        } else {
            (adapterConfigs, deviceConfigs) = try scenario.resolved()
            worldHearing = [:]
        }
        self.worldGateway = worldGateway
        var adapters: [String: SimulatedAdapter] = [:]
        for config in adapterConfigs { adapters[config.name] = try SimulatedAdapter(configuration: config) }
        var devices: [String: SimulatedDevice] = [:]
        let adapterPaths = adapters.mapValues(\.path)
        for config in deviceConfigs {
            devices[config.address] = try SimulatedDevice(configuration: config, adapterPaths: adapterPaths, timings: timings)
        }
        self.adapters = adapters
        self.devices = devices
        adapterNames = adapterConfigs.map(\.name)
        deviceAddresses = deviceConfigs.map(\.address)
        fleetFaults = scenario.faults ?? FaultSettings()
        schedule = scenario.schedule ?? []
        passersBy = scenario.passersBy
        passersBySeed = (scenario.seed ?? 1) ^ 0x7A55_E7B1
    }

    // MARK: - Lifecycle

    /// Connects, exports the tree, takes `org.bluez`, starts the control interface, the expiry
    /// sweeper and the fault schedule.
    public func start() async throws {
        guard !started else { return }
        if let worldGateway { worldMembership = try WorldMembership.join(worldGateway, devices: deviceAddresses) }
        started = true
        try await bringUp()
        let control = try await DBusConnection.connect(to: bus, threadName: "bluez-sim-control")
        controlConnection = control
        try await control.export(SimulatorControl.interface(for: self), at: Self.controlPath)
        guard try await control.requestName(Self.controlName) == .primaryOwner else {
            throw DBusError(name: DBusError.failed, message: "\(Self.controlName) is already owned on this bus")
        }
        backgroundTasks.append(Task { await self.sweepExpiredDevices() })
        if let passersBy { backgroundTasks.append(Task { await self.streamPassersBy(passersBy) }) }
        for address in deviceAddresses where devices[address]?.configuration.wake != nil {
            backgroundTasks.append(Task { await self.runWakeSchedule(address) })
        }
        for entry in schedule {
            let delay = timings.duration(entry.at)
            backgroundTasks.append(
                Task {
                    try? await Task.sleep(for: delay)
                    guard !Task.isCancelled else { return }
                    try? await self.apply(entry.fault)
                })
        }
    }

    /// Stops everything: links drop silently, sockets close, both bus connections close.
    public func stop() async {
        for task in backgroundTasks { task.cancel() }
        backgroundTasks.removeAll()
        for address in deviceAddresses {
            devices[address]?.measurement?.windowTask?.cancel()
            devices[address]?.measurement?.resumeTask?.cancel()
        }
        await goDown()
        await controlConnection?.close()
        controlConnection = nil
        // After goDown: its links have ended, so the world has them back.
        worldMembership?.leave()
        worldMembership = nil
    }

    /// The unique name currently owning `org.bluez` (nil while "restarting").
    public var uniqueName: String? { connection?.uniqueName }

    /// Exports the whole tree on a fresh connection, then requests the well-known name, so a
    /// client that sees the name appear finds every object at once.
    func bringUp() async throws {
        let connection = try await DBusConnection.connect(to: bus, threadName: "bluez-sim")
        self.connection = connection
        await connection.addObjectManager(at: .root)
        try await connection.export(
            [(agentManagerInterface(), [:]), (Self.profileManagerInterface(), [:])], at: "/org/bluez")
        for name in adapterNames {
            guard let adapter = adapters[name] else { continue }
            try await connection.export(adapterInterface(name), properties: adapterProperties(adapter), at: adapter.path)
        }
        // Permanent devices (bonded, or once connected or paired) are remembered across
        // restarts: bluetoothd keeps them on disk, per adapter, and loads them at start. A link
        // the kernel still holds (one a killed bluetoothd left behind) is exported too, connected:
        // bluetoothd asks the kernel for its connections at start (`get_connections_complete` in
        // src/adapter.c), creating a device it has no record of (`btd_adapter_get_device`).
        for address in everyAddress {
            guard let device = devices[address] else { continue }
            for adapter in device.configuration.heardBy
            where device.objects[adapter]?.temporary == false || device.isLinked(through: adapter) {
                await exportDevice(address, on: adapter, seen: false)
            }
        }
        clientWatchTask = Task { await self.watchClients(on: connection) }
        guard try await connection.requestName(Self.serviceName) == .primaryOwner else {
            throw DBusError(name: DBusError.failed, message: "\(Self.serviceName) is already owned on this bus")
        }
    }

    /// Drops the connection as a dying bluetoothd's goes: no InterfacesRemoved, no
    /// PropertiesChanged; the bus announces the name vanished. Sockets close, and so do the
    /// links, silently — unless `leavingLinksUp` (bluetoothd was killed): then the kernel keeps
    /// the links that are up (`leaveLinkBehind`).
    func goDown(leavingLinksUp: Bool = false) async {
        guard let connection else { return }
        self.connection = nil
        clientWatchTask?.cancel()
        clientWatchTask = nil
        for name in adapterNames {
            endDiscovery(on: name)
            adapters[name]?.attemptsInFlight = 0
        }
        for address in everyAddress {
            if leavingLinksUp, devices[address]?.link.isUp == true {
                leaveLinkBehind(address)
            } else {
                await dropLink(address, reason: nil, announce: false)
            }
            devices[address]?.gattAdapter = nil
            devices[address]?.gattPaths.removeAll()
            devices[address]?.characteristics.removeAll()
            for adapter in devices[address]?.configuration.heardBy ?? [] { devices[address]?.objects[adapter]?.exported = false }
        }
        await connection.close()
    }

    /// bluetoothd 5.66 stopping on SIGTERM (what `systemctl stop bluetooth` sends):
    /// `adapter_shutdown` (src/adapter.c) powers each powered adapter off through the kernel's
    /// management interface (`set_mode(MGMT_OP_SET_POWERED, 0x00)`, not the D-Bus property, so
    /// no `PowerState` "on-disabling" first) and leaves the bus once the last is off. What a
    /// client saw on Debian 12 (Linux 6.1, bumble controllers): the AcquireNotify sockets hang
    /// up, then each link's `Connected` turns false with no reason, then `Powered` false (50–250
    /// ms after the first link loss), then the name goes. The caller leaves the bus (`goDown`).
    /// Returns the adapters it powered off, which the next bluetoothd powers on again.
    private func stopAsOnSIGTERM() async -> [String] {
        let poweredOff = adapterNames.filter { adapters[$0]?.powered == true }
        // The power-off is asked of the kernel before anything is reported: from now on a
        // Connect or StartDiscovery finds the adapter not ready, and an attempt in flight ends.
        for name in poweredOff { adapters[name]?.powered = false }
        await closeNotifySockets(address: nil)
        for address in everyAddress where devices[address]?.link != .disconnected {
            await dropLink(address, reason: nil, announce: true)
        }
        for name in poweredOff {
            guard let adapter = adapters[name] else { continue }
            endDiscovery(on: name)
            await setProperties(
                ["Discovering": .boolean(false), "Powered": .boolean(false), "PowerState": .string("off")],
                of: Self.adapterInterfaceName, at: adapter.path)
        }
        return poweredOff
    }

    /// A link a killed bluetoothd leaves to the kernel: its sockets close with the process and
    /// the delayed work of its connection gives up; no ATT bearer is left for the next
    /// bluetoothd, so its services are not resolved. Linux ends the link
    /// `leftBehindLinkTimeout` after its last user went (reason 0x13 on the air; BlueZ 5.66
    /// reports `Connected` false alone, if it is back by then).
    private func leaveLinkBehind(_ address: String) {
        guard var device = devices[address], device.link.isUp, !device.linkLeftBehind else { return }
        for path in Array(device.characteristics.keys) { device.characteristics[path]?.tearDown() }
        device.link = .connected
        device.linkLeftBehind = true
        device.linkEpoch += 1
        device.linkLossTask?.cancel()
        device.linkLossTask = nil
        devices[address] = device
        let epoch = device.linkEpoch
        let timeout = timings.duration(timings.leftBehindLinkTimeout)
        backgroundTasks.append(
            Task {
                try? await Task.sleep(for: timeout)
                guard !Task.isCancelled else { return }
                await self.kernelEndsLeftBehindLink(address, epoch: epoch)
            })
    }

    private func kernelEndsLeftBehindLink(_ address: String, epoch: Int) async {
        guard let device = devices[address], device.linkEpoch == epoch, device.linkLeftBehind else { return }
        await dropLink(address, reason: nil, announce: true)
    }

    /// Discovery on the adapter ends with its sessions and filters (power-off, bluetoothd gone).
    func endDiscovery(on name: String) {
        adapters[name]?.discoveryTask?.cancel()
        adapters[name]?.discoveryTask = nil
        adapters[name]?.discoveryClients.removeAll()
        adapters[name]?.discoveryFilters.removeAll()
        adapters[name]?.discoveryStalled = false
    }

    /// A simulated bluetoothd restart: stopped (as by SIGTERM) or `killed` (SIGKILL) now, and
    /// back after `seconds` of simulated time with a new unique name, every device it keeps on
    /// disk known again (see `stopAsOnSIGTERM`, `leaveLinkBehind` and `bringUp`).
    func restart(after seconds: Double, killed: Bool) async {
        guard connection != nil else { return }
        restarts += 1
        var poweredOff: [String] = []
        if killed {
            await goDown(leavingLinksUp: true)
        } else {
            poweredOff = await stopAsOnSIGTERM()
            await goDown()
        }
        try? await Task.sleep(for: timings.duration(seconds))
        // bluetoothd powers its adapters on at start (`AutoEnable`, stock true).
        for name in poweredOff { adapters[name]?.powered = true }
        do {
            try await bringUp()
        } catch {
            FileHandle.standardError.write(Data("bluez-sim: cannot come back after a restart: \(error)\n".utf8))
        }
    }

    // MARK: - Counters

    public func counterSnapshot() -> SimulatorCounters { counters }

    public func resetCounters() { counters = SimulatorCounters() }

    /// The object path of a device on the adapter that hears it best (whether or not it is
    /// exported now).
    public func devicePath(of address: String) -> DBusObjectPath? { devices[address]?.home?.path }

    /// The object path of a device on `adapter` (nil when that adapter does not hear it).
    public func devicePath(of address: String, on adapter: String) -> DBusObjectPath? {
        devices[address]?.objects[adapter]?.path
    }

    /// The adapters that have an object for the device now, in the order they hear it best.
    public func exportedAdapters(of address: String) -> [String] {
        guard let device = devices[address] else { return [] }
        return device.configuration.heardBy.filter { device.objects[$0]?.exported == true }
    }

    /// Where the device stands, for a failing test to print: its link (`connected via hci0`) and
    /// each adapter's object (`hci1: temporary, 0.3 s since heard`; `-` when not exported).
    public func linkSummary(of address: String) -> String {
        guard let device = devices[address] else { return "no such device" }
        let now = ContinuousClock.now
        let objects = device.configuration.heardBy.map { adapter -> String in
            guard let object = device.objects[adapter], object.exported else { return "\(adapter): -" }
            let heard = (now - object.lastSeen).formatted(.units(allowed: [.seconds], fractionalPart: .show(length: 1)))
            return "\(adapter): \(object.temporary ? "temporary" : "kept"), \(heard) since heard"
        }
        let link = device.linkAdapter.map { "\(device.link) via \($0)" } ?? "\(device.link)"
        return "\(link); \(objects.joined(separator: ", "))"
    }

    /// Holds the simulator's executor for `seconds` without yielding, as a gateway starved of
    /// CPU does: every timer that fires meanwhile runs late, all at once. For tests of what must
    /// hold under load.
    public func starve(seconds: Double) {
        Thread.sleep(forTimeInterval: seconds)
    }

    /// Every device's address, in scenario order.
    public nonisolated var addresses: [String] { deviceAddresses }

    /// The kind of the device at `address`.
    public func kind(of address: String) -> WearableKind? { devices[address]?.configuration.kind }

    // MARK: - Bus helpers (quiet while the connection is down)

    func setProperties(
        _ values: [String: DBusValue], of interface: String, at path: DBusObjectPath, announcingUnchanged: Bool = false
    ) async {
        try? await connection?.setProperties(values, of: interface, at: path, announcingUnchanged: announcingUnchanged)
    }

    func emit(_ path: DBusObjectPath, _ interface: String, _ member: String, _ body: [DBusValue]) async {
        try? await connection?.emitSignal(path: path, interface: interface, member: member, body)
    }

    // MARK: - Clients

    /// Discovery sessions and notify sessions belong to a client's bus connection and end
    /// when it closes, as in BlueZ.
    private func watchClients(on connection: DBusConnection) async {
        let rule = MatchRule(
            sender: "org.freedesktop.DBus", path: "/org/freedesktop/DBus", interface: "org.freedesktop.DBus",
            member: "NameOwnerChanged")
        guard let stream = try? await connection.signals(matching: rule) else { return }
        do {
            for try await message in stream {
                guard let name = try? message.body.decode(String.self, at: 0), name.hasPrefix(":"),
                    let newOwner = try? message.body.decode(String.self, at: 2), newOwner.isEmpty
                else { continue }
                await clientVanished(name)
            }
        } catch {
            // The connection closed (restart or stop): nothing left to watch.
        }
    }

    func clientVanished(_ client: String) async {
        agentOwnerVanished(client)
        for name in adapterNames where adapters[name]?.discoveryClients.contains(client) == true {
            try? await stopDiscovery(adapter: name, client: client)
        }
        for address in everyAddress {
            guard let device = devices[address] else { continue }
            for (path, characteristic) in device.characteristics where characteristic.notifyClients.contains(client) {
                try? await stopNotify(address, path, client: client)
            }
        }
    }
}
