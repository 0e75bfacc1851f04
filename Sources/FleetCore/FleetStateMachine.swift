// Shaped like connection-pool state machines that return actions: the runtime's
// `FleetOrchestrator` feeds every fact it learns here, one at a time, and executes the returned
// actions in order. Nothing here performs I/O, reads a clock or draws randomness it was not given.

/// The fleet's single authority: which devices it manages and why, what it knows of bluetoothd,
/// the adapters and each device's BlueZ objects, each device's link as slot accounting sees it,
/// the pool policy with its attempt gate, and the running configuration.
///
/// Guarantees:
/// - One input is applied whole before the next: a reload is one input, so no other input ever
///   sees the new configuration with the old devices.
/// - A device's `link` is written only here (by facts from BlueZ, grants and finished attempts).
/// - Attempts start only through the pool policy's grants (at most one in flight per adapter,
///   within the fleet rate limit, never beyond slots or `max_connections`).
/// - Pinned devices are always wanted (unless a `disconnect` command holds them); pool devices
///   only while the policy places them.
/// - Evaluation requests coalesce: `requestEvaluation` is asked for once until `.evaluate` comes.
public struct FleetStateMachine: Sendable {
    /// The fleet's record of one device.
    public struct Device: Sendable, Hashable {
        public internal(set) var pinned: Bool
        /// Configured (pinned), advertised (pool), or learned from BlueZ's alias.
        public internal(set) var name: String?
        public internal(set) var className: String?
        public internal(set) var priority: Int
        /// What the policy last told the device's machine.
        var wanted: Bool
        /// The device's machine asked for an attempt and has not had one.
        var wantsAttempt = false
        public internal(set) var link: PoolLinkStatus = .disconnected
        public internal(set) var state: DeviceState = .idle
        /// BlueZ's objects for the device, one per adapter that heard it, in adapter order (kept
        /// without names and services, which only admission reads, from the fact itself).
        public internal(set) var objects: [DeviceObject] = []
        /// The last RSSI each adapter reported (BlueZ stops reporting it once linked).
        public internal(set) var lastRSSI: [AdapterID: Int] = [:]
        /// Failed attempts since the last link (the pool's score counts them against the device);
        /// a failure the fleet puts down to the adapter or bluetoothd is not counted.
        var recentFailures = 0
        /// Where to try when BlueZ holds no object for the device: the last link's adapter, or
        /// the state file's.
        public internal(set) var lastAdapter: AdapterID?
        /// Links made through granted attempts (the control interface reports reconnects).
        public internal(set) var linksMade: UInt64 = 0
        /// The class of the most recent failure, kept after the device recovered.
        public internal(set) var lastFailure: FailureClass?
        /// The classes `lastFailure` had before it, newest last, shown again as the device machine
        /// takes failures back (`failureWithdrawn`, newest first, at most
        /// `DeviceStateMachine.longestExplainableChain` at once).
        var failuresBeforeLast: [FailureClass?] = []
        /// Whether the device's write options were handed to the write path.
        var writesConfigured = false
        /// Subscriptions added and removed by command; they outlive class changes and reloads.
        var addedSubscriptions: [String] = []
        var removedSubscriptions: Set<String> = []
        /// Disconnected by command: no attempts until `reconnect` or `pin`.
        public internal(set) var held = false
        /// The ownership gate is on and this gateway was not given the device (another gateway
        /// owns it, or nobody yet): no attempts until the ownership machine gives it.
        public internal(set) var awaitingOwnership = false
        /// A pool device's services as admission saw them (advertised, or the state file's), so
        /// a reload can rank it again under new rules. Empty for pinned devices.
        var poolServices: [String] = []
        /// A link loss BlueZ gave no reason for (BlueZ 5.66 has no `Disconnected` signal): its
        /// adapter and when, for a cause the fleet learns right after (`explainLinkLosses`).
        var unexplainedLinkLoss: UnexplainedLoss?
        /// Granted attempts that failed while their adapter and bluetoothd seemed fine, oldest
        /// first: bluetoothd can answer a `Connect` its adapter's power-off (or its own exit)
        /// ended before it reports that cause. Kept like `unexplainedLinkLoss`, until a link
        /// comes up, at most `DeviceStateMachine.longestExplainableChain` of them: the device
        /// machine takes back a row of failed retries with the loss they followed, so each failed
        /// attempt inside the cause's window stops counting in `recentFailures`.
        var unexplainedAttemptFailures: [UnexplainedLoss] = []
        /// When the kernel closed a link of this device that a killed bluetoothd left behind:
        /// an attempt that fails right after ("Operation already in progress": the old link is
        /// still being torn down) failed because of that, not because of the device.
        var leftBehindClosedAt: MonotonicInstant?

        var context: FleetEvent.DeviceContext { FleetEvent.DeviceContext(name: name, adapter: link.adapter, pinned: pinned) }
    }

    /// A link or attempt that ended on `adapter` at `at`, its cause not known yet.
    struct UnexplainedLoss: Sendable, Hashable {
        var adapter: AdapterID
        var at: MonotonicInstant
    }

    /// How long after a reasonless link loss the fleet still names its cause when it learns one:
    /// bluetoothd reports the links an adapter's power-off ended (`Connected` false, from the
    /// kernel's disconnections) just before `Powered` false, and a stopping bluetoothd drops its
    /// links just before it leaves the bus; a loss further back than this was something else.
    public static let linkLossCauseWindow: Duration = .seconds(2)

    /// How long after a bluetoothd left with links still up a reasonless link loss is put down
    /// to those links being closed: Linux ends a link ~2 s after its last user (the ATT socket
    /// of the bluetoothd that went) closed, and a bluetoothd restarted at once first reports
    /// such a link connected. Measured on Linux 6.1 with bluetoothd 5.66 killed: 2 s; the rest
    /// is room for a slow gateway.
    public static let leftBehindLinkWindow: Duration = .seconds(10)
    /// How long after the kernel closed a link left behind an attempt at the same device that
    /// fails is put down to that closing: Linux's teardown of an LE link takes up to its 2 s
    /// disconnect timeout, and the attempt is granted as soon as the loss is heard.
    public static let leftBehindAttemptWindow: Duration = .seconds(3)

    /// One BlueZ `Device1` object of a device, as the runtime read it from bluetoothd's mirror.
    public struct DeviceObject: Sendable, Hashable, Codable {
        public var adapter: AdapterID
        /// Alias, else advertised name.
        public var name: String?
        /// Advertised or resolved service UUIDs, as BlueZ spells them.
        public var services: [String]
        public var rssi: Int?
        public var connected: Bool
        /// bluetoothd holds keys for the device on this adapter (`Paired`). Keys belong to one
        /// adapter: a bonded device connected through another one must bond again there, and
        /// many measurement devices keep a single bond, so they stay where they bonded.
        public var paired: Bool

        public init(
            adapter: AdapterID, name: String? = nil, services: [String] = [], rssi: Int? = nil, connected: Bool = false,
            paired: Bool = false
        ) {
            self.adapter = adapter
            self.name = name
            self.services = services
            self.rssi = rssi
            self.connected = connected
            self.paired = paired
        }

        private enum CodingKeys: String, CodingKey { case adapter, name, services, rssi, connected, paired }

        // Recordings made before `paired` existed decode as unpaired.
        public init(from decoder: any Decoder) throws {
            let values = try decoder.container(keyedBy: CodingKeys.self)
            self.init(
                adapter: try values.decode(AdapterID.self, forKey: .adapter),
                name: try values.decodeIfPresent(String.self, forKey: .name),
                services: try values.decode([String].self, forKey: .services),
                rssi: try values.decodeIfPresent(Int.self, forKey: .rssi),
                connected: try values.decode(Bool.self, forKey: .connected),
                paired: try values.decodeIfPresent(Bool.self, forKey: .paired) ?? false)
        }
    }

    /// What the state file knew of a device at start.
    public struct RestoredDevice: Sendable, Hashable, Codable {
        public enum Membership: Sendable, Hashable, Codable { case pinned, pool }
        public var id: DeviceID
        public var membership: Membership
        public var name: String?
        /// As the state file lists them (an array shared with the store's copy, not a set per
        /// device kept for as long as the daemon runs).
        public var servicesSeen: [String]
        public var lastAdapter: AdapterID?
        public var hasBeenReady: Bool

        public init(
            id: DeviceID, membership: Membership, name: String? = nil, servicesSeen: [String] = [], lastAdapter: AdapterID? = nil,
            hasBeenReady: Bool = false
        ) {
            self.id = id
            self.membership = membership
            self.name = name
            self.servicesSeen = servicesSeen
            self.lastAdapter = lastAdapter
            self.hasBeenReady = hasBeenReady
        }
    }

    /// An adapter bluetoothd reported, selected or not.
    public struct Adapter: Sendable, Hashable {
        public internal(set) var powered: Bool
        /// Selected by `[fleet] adapters` (or all are): the fleet uses it, and it has a central.
        public internal(set) var selected: Bool
        /// The pool has room on it and looks for candidates.
        var poolSearching = false
        /// Discovery on it, as the daemon drives it (`driveDiscovery`).
        public internal(set) var discovery = AdapterDiscovery()
    }

    // MARK: - Inputs and actions

    /// A normalised fact, or a request. Each is applied whole, with the `now` it is given.
    public enum Input: Sendable, Hashable, Codable {
        /// The state file's devices; before `start`.
        case restore([RestoredDevice])
        /// The run-time pins saved by a previous run; before `start`.
        case restoreRuntimePins([FleetRuntimeConfiguration.PinnedDevice])
        /// Create the pinned devices and the restored pool devices.
        case start
        /// bluetoothd is being followed: tell the pinned devices they are wanted.
        case started
        case stop
        /// bluetoothd took its name and its objects were read. `held` are the devices it has
        /// objects for, `adapters` every adapter it has, `powered` those of them that are on (an
        /// optional, so journals recorded before it was told still replay: nil is none).
        case bluetoothdAppeared(held: Set<DeviceID>, adapters: Set<AdapterID>, powered: Set<AdapterID>? = nil)
        /// bluetoothd was there when the daemon started following it: its appearance is on its
        /// way (before `started`; the pinned devices are wanted once it arrived).
        case bluetoothdPresentAtStart
        case bluetoothdVanished
        /// An adapter object appeared or its `Powered` changed.
        case adapterChanged(AdapterID, powered: Bool)
        /// The powered set changed (what every device hears).
        case adapterPowerChanged(AdapterID, powered: Bool)
        case adapterRemoved(AdapterID)
        /// Something happened to a device's BlueZ objects (`event` is what its machine hears, nil
        /// for a change only the fleet cares about, such as RSSI); `objects` are all its objects
        /// now, on every adapter.
        case device(DeviceID, DeviceEvent?, objects: [DeviceObject])
        /// What a device's machine reported.
        case deviceOutput(DeviceOutput)
        /// Run the pool policy (a requested evaluation, or the rate limit's next refill).
        case evaluate
        /// Apply a new, validated configuration. `objects` are BlueZ's objects of its pinned
        /// devices (a device the fleet did not manage yet is known to BlueZ all the same).
        indirect case reload(FleetRuntimeConfiguration, objects: [DeviceID: [DeviceObject]])
        /// A command: the reply says whether it was accepted.
        case command(FleetCommand)
        /// bluetoothd answered discovery call `number` on the adapter (`failure` nil: it was done).
        case discoveryFinished(AdapterID, number: UInt64, failure: DeviceEvent.Failure?)
        /// A failed discovery call's backoff ended (`scheduleDiscoveryRetry`).
        case retryDiscovery
        /// Someone asked what the radio hears (`nearby` with a scan): every selected adapter
        /// discovers, unfiltered, until `until` (or longer, if the fleet needs it anyway). A
        /// later deadline extends a scan running; an earlier one changes nothing.
        case scan(until: MonotonicInstant)
        /// A `Pair` made outside the device machines (`wearfleetctl pair`) ended on `adapter`: a
        /// discovery of the fleet's there is restarted (`restartDiscoveryAfterPairing`).
        case pairingEnded(adapter: AdapterID)
        /// Devices are shared with other gateways (on) or not (off): see `setOwnershipGate`.
        case ownershipGate(enabled: Bool)
        /// The ownership machine gave a device to this gateway, or took it away.
        case ownershipDecided(DeviceID, linkAllowed: Bool)
    }

    /// What the owner must do, in order.
    public enum Action: Sendable, Hashable {
        /// Start running a device machine (seeded for its own jitter).
        // Boxed (`indirect`), as are the other large cases: every action of an array is as large
        // as its largest case, and the fleet hands out thousands at once (NOTES.md).
        indirect case createDevice(DeviceStateMachine, seed: UInt64)
        case deliver(DeviceID, DeviceEvent)
        indirect case reconfigureDevice(DeviceID, DeviceStateMachine.Configuration, ReconnectPolicy)
        /// Stop a device machine: cancel its timers and operations, drop its notify sockets and
        /// queued writes; `disconnect` its link first if it has one.
        case retireDevice(DeviceID, disconnect: Bool)
        /// Stop every device machine (the daemon stops); `disconnect` the listed links, giving
        /// up after `within`.
        case shutDown(disconnect: [DeviceID], within: Duration)
        /// A device's link is gone: its notification sockets are closed.
        case dropNotifySockets(DeviceID)
        /// Create the adapter's central (connection attempts).
        case createCentral(AdapterID)
        /// The adapter or bluetoothd stopped: what the central learned of bluetoothd is stale.
        case centralStopped(AdapterID)
        /// Make discovery call `number` on the adapter, as a task of its own; its outcome comes
        /// back as `.discoveryFinished` (the executor never waits for it).
        case discover(AdapterID, DiscoveryCall, number: UInt64)
        /// Feed `.retryDiscovery` at `instant`, replacing an earlier timer; nil cancels it.
        case scheduleDiscoveryRetry(at: MonotonicInstant?)
        case configureWrites(DeviceID, OutgoingDeviceOptions)
        case openWriteLane(DeviceID, useSocket: Bool)
        case closeWriteLane(DeviceID)
        /// Feed `.evaluate` after the inputs already waiting.
        case requestEvaluation
        /// Feed `.evaluate` at `instant`, replacing an earlier timer; nil cancels it.
        case scheduleEvaluation(at: MonotonicInstant?)
        case publish(FleetEvent)
        /// The answer to the input (a reload's summary, a write's settings, a refusal).
        case reply(Reply)
    }

    /// What the fleet knows of a device when it asks the store to save it.
    public struct PersistContext: Sendable, Hashable {
        public var pinned: Bool
        public var name: String?
        public var adapter: AdapterID?

        public init(pinned: Bool, name: String?, adapter: AdapterID?) {
            self.pinned = pinned
            self.name = name
            self.adapter = adapter
        }
    }

    public enum Reply: Sendable, Hashable {
        case reloaded(ReloadSummary)
        /// A command was accepted.
        case done
        case refused(FleetCommandError)
        case writeSettings(FleetRuntimeConfiguration.WriteSettings)
    }

    // MARK: - State

    public internal(set) var configuration: FleetRuntimeConfiguration
    public internal(set) var devices: [DeviceID: Device] = [:]
    public internal(set) var adapters: [AdapterID: Adapter] = [:]
    public internal(set) var bluetoothdPresent = false
    public internal(set) var running = false
    public internal(set) var policy: PoolPolicy
    /// Pins made at run time (`FleetCommand.pin`), merged with the configuration's.
    public internal(set) var runtimePins: [DeviceID: FleetRuntimeConfiguration.PinnedDevice] = [:]
    /// What the state file knew at start, by device.
    public internal(set) var restored: [DeviceID: RestoredDevice] = [:]
    /// An evaluation was requested and has not run yet.
    var evaluationRequested = false
    /// bluetoothd was there at start and its appearance is not applied yet.
    var bluetoothdExpected = false
    /// When the last bluetoothd left the bus with links still up (killed, crashed); nil when it
    /// ended them first. See `leftBehindLinkWindow`.
    var bluetoothdLeftLinksAt: MonotonicInstant?
    /// The devices linked when that bluetoothd left: only their next reasonless loss, within
    /// the window, is put down to the kernel closing what it left.
    var linksLeftBehind: Set<DeviceID> = []
    /// Pins already told about a device heard with their address but the other address type.
    var addressTypeMismatchesTold: Set<DeviceID> = []
    /// Devices linked on an adapter when it was removed (bluetoothd leaving removes every adapter
    /// just before it is reported gone); kept until bluetoothd is reported gone or back.
    var linksAtAdapterRemoval: Set<DeviceID> = []
    /// `started` came while bluetoothd was expected: the pinned devices are wanted once it is here.
    var wantPinnedOnAppearance = false
    /// Devices are shared with other gateways: each waits to be given (`ownershipDecided`).
    public internal(set) var ownershipGateEnabled = false
    /// Pinned devices no plan could place, heard only by full adapters while another has room:
    /// discovery looks for them (`lookForUnplacedPinned`).
    public internal(set) var lookingElsewhere: Set<DeviceID> = []
    /// Seeds for device machines' jitter, drawn in creation order.
    var seeds: SeededRandom
    /// Devices whose machines look for them (`DeviceOutput.resolving`): discovery runs unfiltered
    /// on every usable adapter while any does.
    public internal(set) var resolving: Set<DeviceID> = []
    /// The number of the last discovery call asked for.
    var discoveryCalls: UInt64 = 0
    /// When the discovery retry timer was last set for (nil: not set).
    var discoveryRetryTimer: MonotonicInstant?
    /// A scan asked for (`scan(until:)`) runs until then.
    public internal(set) var scanUntil: MonotonicInstant?
    /// The jitter of discovery retries (its own sequence: device seeds stay as they were).
    var discoveryJitter: SeededRandom

    public init(configuration: FleetRuntimeConfiguration, now: MonotonicInstant, seed: UInt64) {
        self.configuration = configuration
        self.policy = PoolPolicy(configuration: configuration.pool, now: now)
        self.seeds = SeededRandom(seed: seed)
        self.discoveryJitter = SeededRandom.derived(from: seed, index: -1)
    }

    /// Applies one input; returns what the owner must do, in order.
    public mutating func handle(_ input: Input, now: MonotonicInstant) -> [Action] {
        var actions: [Action] = []
        switch input {
        case .restore(let known):
            for device in known { restored[device.id] = device }
        case .restoreRuntimePins(let pins):
            let before = observedDevices()
            restoreRuntimePins(pins)
            publishUpdates(since: before, &actions)
        case .start:
            start(&actions)
        case .bluetoothdPresentAtStart:
            if !bluetoothdPresent { bluetoothdExpected = true }
        case .started:
            if bluetoothdExpected {
                wantPinnedOnAppearance = true
            } else {
                wantPinned(&actions)
            }
            requestEvaluation(&actions)
        case .stop:
            stop(&actions)
        case .bluetoothdAppeared(let held, let bluezAdapters, let powered):
            bluetoothdAppeared(held: held, adapters: bluezAdapters, powered: powered ?? [], &actions)
        case .bluetoothdVanished:
            // A bluetoothd that stops in order ends its links first (they are all lost by now);
            // one that was killed leaves them to the kernel, which closes them a moment later.
            // The translator removes the adapters first; their devices' machines may have let go
            // of the links in between (`linksAtAdapterRemoval`).
            linksLeftBehind = Set(devices.compactMap { id, device in if case .connected = device.link { id } else { nil } })
                .union(linksAtAdapterRemoval)
            linksAtAdapterRemoval = []
            bluetoothdLeftLinksAt = linksLeftBehind.isEmpty ? nil : now
            let explanations = explainLinkLosses(on: nil, cause: .bluetoothdGone, now: now, &actions)
            bluetoothdVanished(&actions)
            // After the devices heard bluetoothd is gone: a device whose failure is taken back
            // then waits for bluetoothd, rather than asking for an attempt first.
            actions += explanations
        case .adapterChanged(let adapter, let powered):
            var explanations: [Action] = []
            if !powered, adapters[adapter]?.powered == true {
                explanations = explainLinkLosses(on: adapter, cause: .adapterPoweredOff, now: now, &actions)
            }
            adapterChanged(adapter, powered: powered, &actions)
            actions += explanations
        case .adapterPowerChanged(let adapter, let powered):
            guard isSelected(adapter) else { break }
            deliverToAll(powered ? .adapterPowered(adapter) : .adapterUnpowered(adapter), &actions)
            requestEvaluation(&actions)
        case .adapterRemoved(let adapter):
            // Not a cause of its own: bluetoothd leaving removes every adapter first (the
            // translator's order), and `bluetoothdVanished` right after names what happened.
            adapterRemoved(adapter, &actions)
        case .device(let id, let event, let objects):
            deviceFact(id, event, objects: objects, now: now, &actions)
        case .deviceOutput(let output):
            deviceOutput(output, now: now, &actions)
        case .evaluate:
            evaluationRequested = false
            evaluate(now: now, &actions)
        case .reload(let new, let objects):
            let before = observedDevices()
            actions.append(.reply(.reloaded(reload(new, objects: objects, now: now, &actions))))
            publishUpdates(since: before, &actions)
        case .command(let command):
            let before = observedDevices()
            actions.append(.reply(self.command(command, now: now, &actions)))
            publishUpdates(since: before, &actions)
        case .discoveryFinished(let adapter, let number, let failure):
            discoveryFinished(adapter, number: number, failure: failure, now: now, &actions)
        case .retryDiscovery:
            discoveryRetryTimer = nil
        case .scan(let until):
            if scanUntil.map({ until > $0 }) ?? true { scanUntil = until }
        case .pairingEnded(let adapter):
            restartDiscoveryAfterPairing(on: adapter)
        case .ownershipGate(let enabled):
            let before = observedDevices()
            setOwnershipGate(enabled: enabled, &actions)
            publishUpdates(since: before, &actions)
        case .ownershipDecided(let id, let linkAllowed):
            let before = observedDevices()
            ownershipDecided(id, linkAllowed: linkAllowed, &actions)
            publishUpdates(since: before, &actions)
        }
        driveDiscovery(now: now, &actions)
        return actions
    }

    /// Each device as its consumers see it (`FleetObservedDevice`): compared before and after the
    /// inputs that change roles, so that every outlet hears of a change however it came.
    private func observedDevices() -> [DeviceID: FleetObservedDevice] {
        devices.reduce(into: [:]) { result, entry in result[entry.key] = observed(entry.key, entry.value) }
    }

    func observed(_ id: DeviceID, _ device: Device) -> FleetObservedDevice {
        FleetObservedDevice(id: id, name: device.name, className: device.className, pinned: device.pinned, held: device.held)
    }

    /// Publishes `deviceUpdated` for every device that was in the fleet before and is still,
    /// changed (a device added or removed was announced as such).
    private func publishUpdates(since before: [DeviceID: FleetObservedDevice], _ actions: inout [Action]) {
        for (id, device) in devices.sorted(by: { $0.key < $1.key }) {
            guard let earlier = before[id] else { continue }
            let now = observed(id, device)
            if now != earlier { actions.append(.publish(.deviceUpdated(now))) }
        }
    }

    // MARK: - Lifecycle

    private mutating func start(_ actions: inout [Action]) {
        running = true
        for pinned in effectivePins(configuration) {
            addDevice(pinned.id, pinned: true, name: pinned.name, className: pinned.className, priority: pinned.priority, &actions)
        }
        // Pool devices from the state file compete for slots again when the pool is on (pinned
        // ones were created from the configuration, which decides membership), if they pass the
        // pool's filters, with the class and priority of its rules, as a device found by
        // discovery would (the state file's services stand for its advertisement).
        guard configuration.poolEnabled else { return }
        for (id, known) in restored.sorted(by: { $0.key < $1.key }) where devices[id] == nil {
            guard let placement = poolPlacement(name: known.name, services: known.servicesSeen, rssi: nil) else { continue }
            addDevice(id, pinned: false, name: known.name, className: placement.className, priority: placement.priority, &actions)
            devices[id]?.poolServices = known.servicesSeen
        }
    }

    private mutating func stop(_ actions: inout [Action]) {
        running = false
        wantPinnedOnAppearance = false
        actions.append(.scheduleEvaluation(at: nil))
        if discoveryRetryTimer != nil {
            discoveryRetryTimer = nil
            actions.append(.scheduleDiscoveryRetry(at: nil))
        }
        let ids = devices.keys.sorted()
        if configuration.disconnectOnStop {
            for id in ids { actions.append(.deliver(id, .policyUpdated(wanted: false))) }
        }
        let linked = configuration.disconnectOnStop ? ids.filter { devices[$0]?.link != .disconnected } : []
        // A hung bluetoothd must not hold the stop past systemd's `TimeoutStopSec` (each
        // disconnect alone may wait 25 s for a reply).
        actions.append(.shutDown(disconnect: linked, within: .seconds(10)))
    }

    // MARK: - Devices

    /// Adds a device record and asks for its machine; an existing record is kept as it is.
    mutating func addDevice(
        _ id: DeviceID, pinned: Bool, name: String?, className: String?, priority: Int, _ actions: inout [Action]
    ) {
        guard devices[id] == nil else { return }
        let known = restored[id]
        let machine = DeviceStateMachine(
            device: id, configuration: configuration.deviceConfiguration(className: className), reconnectPolicy: configuration.reconnect,
            servicesSeen: Set(known?.servicesSeen ?? []), hasBeenReady: known?.hasBeenReady ?? false)
        var device = Device(
            pinned: pinned, name: name ?? known?.name, className: className, priority: priority,
            wanted: pinned && !ownershipGateEnabled)
        device.awaitingOwnership = ownershipGateEnabled
        device.lastAdapter = known?.lastAdapter
        devices[id] = device
        actions.append(.createDevice(machine, seed: seeds.next()))
        actions.append(.publish(.deviceAdded(observed(id, device))))
    }

    /// Tells a device added while running (a reload's new pin) what the others already know:
    /// bluetoothd, the powered adapters and BlueZ's objects for it. `wanted` is applied before a
    /// live link is reported, so a link that is already up is adopted.
    mutating func introduce(_ id: DeviceID, wanted: Bool, now: MonotonicInstant, _ actions: inout [Action]) {
        guard let device = devices[id] else { return }
        if bluetoothdPresent { actions.append(.deliver(id, .bluetoothdAppeared)) }
        for adapter in poweredAdapters { actions.append(.deliver(id, .adapterPowered(adapter))) }
        let objects = device.objects
        for object in objects { actions.append(.deliver(id, .deviceFound(adapter: object.adapter))) }
        if objects.isEmpty, let last = device.lastAdapter, isUsable(last) {
            actions.append(.deliver(id, .deviceFound(adapter: last)))
        }
        if device.awaitingOwnership, objects.contains(where: \.connected) {
            // A link in hand stays until the ownership machine says (see FleetStateMachine+Ownership).
            devices[id]?.awaitingOwnership = false
            devices[id]?.wanted = device.pinned && !device.held
        }
        if wanted, let current = devices[id], !current.pinned || pinnedWanted(current) {
            actions.append(.deliver(id, .policyUpdated(wanted: true)))
        }
        if let live = objects.first(where: \.connected) {
            devices[id]?.link = .connected(live.adapter, since: now)
            actions.append(.deliver(id, .connected))
        }
    }

    /// Stops managing a device: releases its link and forgets it (the state file keeps it).
    mutating func forget(_ id: DeviceID, because reason: FleetEvent.RemovalReason, _ actions: inout [Action]) {
        guard let device = devices.removeValue(forKey: id) else { return }
        resolving.remove(id)
        actions.append(.deliver(id, .policyUpdated(wanted: false)))
        actions.append(.retireDevice(id, disconnect: device.link != .disconnected))
        policy.attemptFinished(device: id)
        actions.append(.publish(.deviceRemoved(id, reason: reason)))
    }

    /// A device BlueZ reports that the fleet does not manage: a pool candidate if the pool is
    /// on and admits it (`[pool]` filters and rules, or the service filter alone).
    mutating func considerPoolCandidate(_ id: DeviceID, objects: [DeviceObject], _ actions: inout [Action]) -> Bool {
        guard configuration.poolEnabled, running, let first = objects.first else { return false }
        let name = first.name
        let services = objects.flatMap(\.services)
        guard let placement = poolPlacement(name: name, services: services, rssi: objects.compactMap(\.rssi).max()) else { return false }
        addDevice(id, pinned: false, name: name, className: placement.className, priority: placement.priority, &actions)
        devices[id]?.poolServices = services
        actions.append(.deliver(id, .bluetoothdAppeared))
        for adapter in poweredAdapters { actions.append(.deliver(id, .adapterPowered(adapter))) }
        return true
    }

    /// Whether the pool admits a device with this name, these services and this RSSI (nil:
    /// not known), and with which priority and class: `[pool]`'s filters and rules, or the
    /// service filter alone.
    /// The priority and class (nil: the defaults) a device the fleet does not have would join
    /// the pool with, by the pool's rules or its service filter; nil when the pool is off or
    /// would not take it.
    public func poolCandidacy(name: String?, services: [String], rssi: Int?) -> (priority: Int, className: String?)? {
        guard configuration.poolEnabled else { return nil }
        return poolPlacement(name: name, services: services, rssi: rssi)
    }

    func poolPlacement(name: String?, services: [String], rssi: Int?) -> (priority: Int, className: String?)? {
        if let admission = configuration.poolAdmission {
            guard let admitted = admission.admit(name: name, services: services, rssi: rssi) else { return nil }
            return (admitted.priority, admitted.className)
        }
        let filter = configuration.poolServiceFilter
        guard filter.isEmpty || !filter.isDisjoint(with: services) else { return nil }
        return (0, configuration.poolClassName)
    }

    // MARK: - bluetoothd and adapters

    private mutating func bluetoothdAppeared(
        held: Set<DeviceID>, adapters bluezAdapters: Set<AdapterID>, powered: Set<AdapterID>, _ actions: inout [Action]
    ) {
        linksAtAdapterRemoval = []
        bluetoothdPresent = true
        bluetoothdExpected = false
        actions.append(.publish(.bluetoothdAppeared))
        // The powered adapters first: a device told bluetoothd is back already knows where to
        // look, rather than passing through `suspended(noPoweredAdapter)` until the adapters'
        // own facts (which follow, and then change nothing) are applied.
        for adapter in powered.sorted() {
            adapterChanged(adapter, powered: true, &actions)
            if isSelected(adapter) { deliverToAll(.adapterPowered(adapter), &actions) }
        }
        // Every device bluetoothd does not hold learns its last adapter as a place to connect it
        // (`deviceFound` without an object makes the central use `ConnectDevice`), before it
        // hears bluetoothd is here: it then connects there rather than looking for it first.
        for id in devices.keys.sorted() where !held.contains(id) {
            guard let last = devices[id]?.lastAdapter, bluezAdapters.contains(last) else { continue }
            actions.append(.deliver(id, .deviceFound(adapter: last)))
        }
        deliverToAll(.bluetoothdAppeared, &actions)
        if wantPinnedOnAppearance {
            wantPinnedOnAppearance = false
            wantPinned(&actions)
        }
        requestEvaluation(&actions)
    }

    /// The pinned devices are wanted from now on (the fleet started).
    private func wantPinned(_ actions: inout [Action]) {
        for id in devices.keys.sorted() where devices[id].map(pinnedWanted) == true {
            actions.append(.deliver(id, .policyUpdated(wanted: true)))
        }
    }

    private mutating func bluetoothdVanished(_ actions: inout [Action]) {
        bluetoothdPresent = false
        actions.append(.publish(.bluetoothdVanished))
        for id in devices.keys {
            devices[id]?.link = .disconnected
            devices[id]?.objects = []
        }
        deliverToAll(.bluetoothdVanished, &actions)
        requestEvaluation(&actions)
    }

    private mutating func adapterChanged(_ adapter: AdapterID, powered: Bool, _ actions: inout [Action]) {
        let selected = isSelected(adapter)
        if adapters[adapter] == nil {
            adapters[adapter] = Adapter(powered: false, selected: selected)
            if selected { actions.append(.createCentral(adapter)) }
        }
        guard selected else {
            adapters[adapter]?.powered = powered
            return
        }
        setPowered(adapter, powered, &actions)
        requestEvaluation(&actions)
    }

    /// Records a selected adapter's power (discovery follows in `driveDiscovery`).
    private mutating func setPowered(_ adapter: AdapterID, _ powered: Bool, _ actions: inout [Action]) {
        if adapters[adapter]?.powered != powered {
            actions.append(.publish(.adapterPowerChanged(adapter, powered: powered)))
        }
        adapters[adapter]?.powered = powered
        if !powered { actions.append(.centralStopped(adapter)) }
    }

    private mutating func adapterRemoved(_ adapter: AdapterID, _ actions: inout [Action]) {
        guard adapters[adapter] != nil else { return }
        for (id, device) in devices { if case .connected(adapter, _) = device.link { linksAtAdapterRemoval.insert(id) } }
        adapters[adapter]?.powered = false
        if adapters[adapter]?.selected == true { actions.append(.centralStopped(adapter)) }
        requestEvaluation(&actions)
    }

    /// Names the cause of the reasonless link losses and failed attempts on `adapter` (nil: any)
    /// in the last `linkLossCauseWindow`: each link loss is published once
    /// (`linkLossExplained`), so the journal says what ended the link, not only that it ended.
    /// Returns the deliveries that tell each device's machine, which takes back the failure it
    /// recorded for it (the caller appends them once the devices heard of the cause itself); a
    /// failed attempt explained so no longer counts against the device's pool score.
    private mutating func explainLinkLosses(
        on adapter: AdapterID?, cause: FleetEvent.LinkLossCause, now: MonotonicInstant, _ actions: inout [Action]
    ) -> [Action] {
        var deliveries: [Action] = []
        for id in devices.keys.sorted() {
            if let loss = devices[id]?.unexplainedLinkLoss, adapter == nil || loss.adapter == adapter {
                devices[id]?.unexplainedLinkLoss = nil
                let ago = now.duration(since: loss.at)
                if ago <= Self.linkLossCauseWindow {
                    actions.append(.publish(.linkLossExplained(id, adapter: loss.adapter, cause: cause, ago: ago)))
                    deliveries.append(.deliver(id, .linkLossExplained(adapter: loss.adapter, cause: cause)))
                }
            }
            let failures = devices[id]?.unexplainedAttemptFailures ?? []
            let onAdapter = failures.filter { adapter == nil || $0.adapter == adapter }
            if !onAdapter.isEmpty {
                devices[id]?.unexplainedAttemptFailures = failures.filter { !(adapter == nil || $0.adapter == adapter) }
                let explained = onAdapter.filter { now.duration(since: $0.at) <= Self.linkLossCauseWindow }
                if let latest = explained.last {
                    if let counted = devices[id]?.recentFailures { devices[id]?.recentFailures = max(0, counted - explained.count) }
                    deliveries.append(.deliver(id, .linkLossExplained(adapter: latest.adapter, cause: cause)))
                }
            }
        }
        return deliveries
    }

    /// What has already ended every link and attempt on `adapter`, as the fleet's records stand:
    /// bluetoothd gone, or the adapter off (or powering off: BlueZ's `PowerState`
    /// "on-disabling" counts as off). nil while both seem fine.
    func knownCauseOfLosses(on adapter: AdapterID) -> FleetEvent.LinkLossCause? {
        if !bluetoothdPresent { return .bluetoothdGone }
        if adapters[adapter]?.powered == false { return .adapterPoweredOff }
        return nil
    }

    func isSelected(_ adapter: AdapterID) -> Bool {
        configuration.adapters.isEmpty || configuration.adapters.contains(adapter)
    }

    /// What a device's machine runs with: its class's settings, with the subscriptions commands
    /// added or removed.
    func machineConfiguration(of device: Device, className: String?, in configuration: FleetRuntimeConfiguration)
        -> DeviceStateMachine.Configuration
    {
        var result = configuration.deviceConfiguration(className: className)
        result.subscriptions.removeAll { device.removedSubscriptions.contains($0) }
        for extra in device.addedSubscriptions where !result.subscriptions.contains(extra) { result.subscriptions.append(extra) }
        return result
    }

    /// Selected and powered: the fleet may place links on it.
    func isUsable(_ adapter: AdapterID) -> Bool {
        guard let record = adapters[adapter] else { return false }
        return record.selected && record.powered
    }

    /// Selected adapters that are powered, in order.
    var poweredAdapters: [AdapterID] {
        adapters.filter { $0.value.selected && $0.value.powered }.map(\.key).sorted()
    }

    /// LE connection slots the fleet may use on `adapter`.
    public func slots(of adapter: AdapterID) -> Int {
        configuration.pool.slotOverrides[adapter] ?? configuration.pool.defaultSlotsPerAdapter
    }

    // MARK: - Helpers

    func deliverToAll(_ event: DeviceEvent, _ actions: inout [Action]) {
        for id in devices.keys.sorted() { actions.append(.deliver(id, event)) }
    }

    mutating func requestEvaluation(_ actions: inout [Action]) {
        guard !evaluationRequested else { return }
        evaluationRequested = true
        actions.append(.requestEvaluation)
    }
}

extension DeviceState {
    /// Ready, or degraded but linked: writes may go out.
    public var acceptsWrites: Bool {
        switch self {
        case .ready, .degraded: true
        default: false
        }
    }
}
