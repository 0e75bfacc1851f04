import Fleet
import FleetConfiguration
import FleetControl
import FleetCore
import FoundationEssentials
import GATT
import Logging

/// The fleet on one MQTT connection: turns the fleet's activity into messages (gateway status,
/// device state, values, Home Assistant discovery) and the broker's command messages into
/// `FleetCommands` calls.
///
/// One actor per connection settings: it owns the device records it publishes from; the client
/// owns the connection. The fleet's events feed and the values' route (`MQTTValueRoute`: values go
/// from the ingest thread to the client's thread, never through this actor) are its only links to
/// the fleet's output, so a broker that is slow or away costs the fleet nothing (the feed drops
/// its own oldest, counted, and the client's queues are bounded).
actor MQTTBridge {
    let client: MQTTClient
    private let route: MQTTValueRoute
    let topics: MQTTTopics
    let discovery: HomeAssistantDiscovery?
    let allowed: Set<MQTTSettings.CommandOp>
    let fleet: any FleetCommands
    let logger: Logger
    var records: [DeviceID: MQTTDeviceRecord] = [:]
    /// The state payload last published per device, so an unchanged record is not sent again.
    private var publishedState: [DeviceID: [UInt8]] = [:]
    /// The discovery configs last published, by topic: only a new or changed one is sent (Home
    /// Assistant's birth message resends all of them through the client's retained set).
    private var publishedConfigs: [String: [UInt8]] = [:]
    /// The gateway API's retained `info` and `devices` last published (`MQTTBridge+Gateway`).
    var publishedInfo: [UInt8]?
    var publishedDevices: [UInt8]?
    /// A device was added, removed or changed since `devices` was last published.
    var devicesChanged = false
    /// Something `info` shows changed since it was last published (`flush`), and when the
    /// status it was last built from was taken.
    var infoChanged = false
    var infoCapturedAt: MonotonicInstant?
    /// The fleet's status, for the gateway's `info` (adapters, configuration).
    let status: (@Sendable () async -> FleetStatus)?
    /// The `[mqtt]` settings `info` summarizes (nothing secret is published).
    let settings: MQTTSettings?
    /// Gets the connection's comings and goings and the messages on its topics, when several
    /// gateways share the fleet (the client must also subscribe to `OwnershipTopics.subscriptions`).
    let ownership: OwnershipCoordinator?
    /// With `ownership`: each device's owner as the coordinator knows it. Only the devices this
    /// gateway owns have their state and discovery published — every gateway of the cluster
    /// knows every pinned device, and each writing its own view of one device to the same
    /// retained topics would make them flap. nil: no cluster, every device is this gateway's.
    var owners: [DeviceID: String]?
    /// Whether the gateway's retained `online` went out. Without a cluster, at `start`, after
    /// every device's state; with one, once the coordinator is past its resync grace and this
    /// gateway's devices' states are published (`noteOwners`): until then it does not know which
    /// devices are its own, and `online` would make the previous run's retained states — a
    /// `ready` from before the restart — available again.
    private var announcedOnline = false
    /// With `ownership`: the coordinator is past its resync grace (`noteOwners`), so a device
    /// missing from `owners` is one nobody live owns, not one whose claim is still unheard.
    private var ownersSettled = false
    /// Devices removed from the fleet before `ownersSettled`, with no owner known: deleted then
    /// if nobody owns them.
    private var removalsAwaitingOwners: Set<DeviceID> = []

    /// The daemon's run number: sessions are named `<run>-<session>`, as in the journal.
    private let sessionRun: UInt64?
    /// Commands waiting per device (by topic segment), behind the one running: each device's run
    /// in order, one at a time, and devices do not wait for each other (a `write` may wait 20 s).
    var commandLanes: [String: [[UInt8]]] = [:]
    /// Commands that may wait per device behind the running one; beyond, one is answered with an
    /// error at once and counted in `wearfleet_mqtt_dropped_total`.
    static let commandsWaitingPerDevice = 64

    init(
        client: MQTTClient, route: MQTTValueRoute, topics: MQTTTopics, homeAssistantDiscovery: Bool, allowed: Set<MQTTSettings.CommandOp>,
        fleet: any FleetCommands, sessionRun: UInt64? = nil, settings: MQTTSettings? = nil,
        status: (@Sendable () async -> FleetStatus)? = nil, ownership: OwnershipCoordinator? = nil, logger: Logger
    ) {
        self.client = client
        self.ownership = ownership
        owners = ownership == nil ? nil : [:]
        self.settings = settings
        self.status = status
        self.sessionRun = sessionRun
        self.route = route
        self.topics = topics
        discovery = homeAssistantDiscovery
            ? HomeAssistantDiscovery(topics: topics, commands: Set(allowed.map(\.rawValue)), version: WearfleetVersion.current) : nil
        self.allowed = allowed
        self.fleet = fleet
        self.logger = logger
    }

    /// What a replaced connection still published when it ended: its devices and where their
    /// retained topics are.
    struct Handover: Sendable {
        /// The devices the old connection still published, with its record of each. What the
        /// values taught it (battery level, Device Information, the kinds seen, the last value's
        /// time) goes on: a reload keeps the links, so no value would teach it again before the
        /// next connection — the battery would read `null` and its sensor and Read battery button
        /// go unannounced for hours.
        var records: [DeviceID: MQTTDeviceRecord]
        var topics: MQTTTopics
        var homeAssistantDiscovery: Bool
        /// The retained `…/<kind>/latest` each device's old connection published, by kind: a
        /// sleeping cuff or scale measures again only when it wakes, so these would otherwise be
        /// gone from a moved prefix (its old copies are deleted) and from the next connection's
        /// republishing (a broker restarted without persistence) until then.
        var latestValues: [DeviceID: [String: [UInt8]]] = [:]

        var devices: Set<DeviceID> { Set(records.keys) }
    }

    /// The gateway's retained `online`, `info`, `devices` and discovery, and the devices the
    /// fleet already has (`status`). `earlier` is what the connection this one replaces still
    /// published: a device the fleet no longer has was removed while no connection listened
    /// (between the old feed's end and this one's start), and its retained topics are deleted
    /// here — this connection's, and the old ones too when the reload moved them or turned
    /// discovery off (same broker: a broker the reload left is not reached); so are the staying
    /// devices' old copies (not with `[cluster]`) and the gateway's own Home Assistant device when
    /// its config topic moved or discovery went off. Every device's state goes out before the gateway's
    /// `online` (a restart finds the previous run's retained states at the broker: `online` first
    /// would make their stale `ready` available again until the new states arrive), and a
    /// device's discovery after its state.
    func start(status: FleetStatus, earlier: Handover? = nil) {
        if let earlier {
            if earlier.topics.prefix != topics.prefix || earlier.topics.gatewayID != topics.gatewayID {
                // The gateway API under the old names describes nothing any more.
                for topic in [earlier.topics.gatewayInfo, earlier.topics.gatewayDevices] {
                    client.publish(MQTTMessage(topic: topic, payload: [], qos: 1, retain: true))
                }
            }
            // Home Assistant's configs under the old discovery prefix, or all of them when
            // discovery was turned off, describe nothing any more: left, Home Assistant would keep
            // the entities (the gateway's device too, under an old gateway id) for good.
            let oldConfigsStale = earlier.homeAssistantDiscovery
                && (discovery == nil || earlier.topics.discoveryPrefix != topics.discoveryPrefix)
            if earlier.homeAssistantDiscovery {
                let oldGateway = HomeAssistantDiscovery(topics: earlier.topics).gatewayConfig().topic
                if discovery?.gatewayConfig().topic != oldGateway {
                    client.publish(MQTTMessage(topic: oldGateway, payload: [], qos: 1, retain: true))
                }
            }
            let present = Set(status.devices.map(\.id))
            // The devices that stay are published under the new names below; their retained
            // copies under the old ones describe nothing any more. (With `[cluster]` every
            // gateway knows every pinned device, and the old copies may be another gateway's:
            // they are left.)
            for id in earlier.devices.intersection(present).sorted() where owners == nil {
                var old: [String] = []
                if oldConfigsStale { old += HomeAssistantDiscovery(topics: earlier.topics).allTopics(of: id) }
                if earlier.topics.prefix != topics.prefix { old += earlier.topics.latestValues(of: id) + [earlier.topics.state(id)] }
                for topic in old { client.publish(MQTTMessage(topic: topic, payload: [], qos: 1, retain: true)) }
            }
            for id in earlier.devices.subtracting(present).sorted() {
                // The old configs before any state (`forget` deletes this connection's): a config
                // left while its state topic is emptied makes Home Assistant's templates fail.
                if earlier.topics != topics || oldConfigsStale, owners == nil {
                    let old = earlier.homeAssistantDiscovery ? HomeAssistantDiscovery(topics: earlier.topics).allTopics(of: id) : []
                    for topic in old + earlier.topics.latestValues(of: id) + [earlier.topics.state(id)] where publishedConfigs[topic] == nil {
                        client.publish(MQTTMessage(topic: topic, payload: [], qos: 1, retain: true))
                    }
                }
                forget(id)
            }
        }
        // The gateway's device first: Home Assistant links a wearable to it (`via_device`) only
        // if it exists when the wearable is registered.
        if let discovery {
            let gateway = discovery.gatewayConfig()
            client.publish(MQTTMessage(topic: gateway.topic, payload: gateway.payload, qos: 1, retain: true))
        }
        for device in status.devices {
            var record = MQTTDeviceRecord(id: device.id)
            if let known = earlier?.records[device.id] { record.keepLearned(from: known) }
            record.name = device.name
            record.className = device.className
            record.pinned = device.pinned
            record.held = device.held
            record.state = device.state.name
            record.reason = LiveStateRecord.reason(device.state, cause: device.lastFailure)
            record.adapter = device.adapter
            record.rssi = device.rssi
            record.session = device.sessions > 0 ? FleetOrchestrator.sessionID(run: sessionRun, session: device.sessions) : nil
            records[device.id] = record
            describe(device.id)
            publishState(device.id)
            if owners == nil {
                // The newest measurement, under the new names when they moved; the same copy
                // again otherwise (this client remembers it for its reconnections), unless one
                // rendered since this connection began is newer. With `[cluster]` the owner
                // publishes them.
                for (kind, payload) in (earlier?.latestValues[device.id] ?? [:]).sorted(by: { $0.key < $1.key }) {
                    let topic = topics.latestValue(device.id, kind: kind)
                    guard client.retainedMessage(topic) == nil else { continue }
                    client.publish(MQTTMessage(topic: topic, payload: payload, qos: 1, retain: true))
                }
            }
            publishDiscovery(device.id)
            withdrawControls(device.id)
        }
        publishInfo(status)
        publishDevices()
        if owners == nil { announceOnline() }
    }

    private func announceOnline() {
        guard !announcedOnline else { return }
        announcedOnline = true
        client.publish(MQTTMessage(topic: topics.gatewayStatus, text: "online", qos: 1, retain: true))
    }

    /// Empties the retained configs of the device's controls `allow_commands` does not permit (an
    /// earlier run may have announced them), for a device this gateway answers for.
    private func withdrawControls(_ id: DeviceID) {
        guard answers(for: id) else { return }
        for topic in discovery?.withdrawnControls(of: id) ?? [] {
            publishedConfigs[topic] = nil
            client.publish(MQTTMessage(topic: topic, payload: [], qos: 1, retain: true))
        }
    }

    // MARK: - The fleet's activity

    /// Reads `feed` (the fleet's events) until it ends or the task is cancelled, on this actor:
    /// one suspension per event rather than a hop onto the actor for each. What the feed dropped
    /// (this side fell behind the fleet) is counted as dropped.
    func consume(_ feed: FleetActivityFeed, counting counters: MQTTClientCounters) async {
        var dropped = 0
        var iterator = feed.makeAsyncIterator()
        while let activity = await iterator.next(isolation: self) {
            handle(activity)
            if case .fleet(let event) = activity, Self.changesInfo(event) { infoChanged = true }
            let now = feed.dropped
            if now > dropped {
                counters.addDropped(now - dropped)
                dropped = now
            }
        }
    }

    func handle(_ activity: FleetActivity) {
        switch activity {
        // Values are published by the route (`MQTTValueRoute`); what the bridge learns from them
        // comes through `learn(from:)`.
        case .value: break
        case .fleet(let event): handle(event)
        }
    }

    /// Reads the values the route hands back (a device's first of a kind, battery levels, Device
    /// Information) until the route finishes or the task is cancelled.
    func learn(from values: AsyncStream<ValuePipeline.Value>) async {
        var iterator = values.makeAsyncIterator()
        while let value = await iterator.next(isolation: self) { learn(from: value) }
    }

    /// What a value teaches the device's record: its kinds (a new one is announced to Home
    /// Assistant), the battery level, the model and manufacturer. The value itself went to the
    /// broker by the route.
    func learn(from value: ValuePipeline.Value) {
        var record = records[value.device] ?? MQTTDeviceRecord(id: value.device)
        let kind = LiveValueRecord.kind(of: value.result)
        var stateChanged = false
        var discoveryChanged = record.kinds.insert(kind).inserted && HomeAssistantDiscovery.byKind[kind] != nil
        if case .success(let event) = value.result {
            switch event {
            case .batteryLevel(let level):
                stateChanged = record.battery != Int(level.percent)
                // The battery sensor (and its read button) are announced with the first level.
                discoveryChanged = discoveryChanged || record.battery == nil
                record.battery = Int(level.percent)
            case .deviceInformation(let information) where information.field == .modelNumber:
                discoveryChanged = discoveryChanged || record.model != information.value
                record.model = information.value
            case .deviceInformation(let information) where information.field == .manufacturerName:
                discoveryChanged = discoveryChanged || record.manufacturer != information.value
                record.manufacturer = information.value
            default: break
            }
        }
        records[value.device] = record
        if stateChanged { publishState(value.device) }
        if discoveryChanged { publishDiscovery(value.device) }
    }

    private func handle(_ event: FleetEvent) {
        switch event {
        case .deviceAdded(let observed):
            var record = records[observed.id] ?? MQTTDeviceRecord(id: observed.id)
            record.name = observed.name ?? record.name
            record.className = observed.className
            record.pinned = observed.pinned
            record.held = observed.held
            // A device's machine starts idle; its first state change may be a while off.
            record.state = record.state ?? DeviceState.idle.name
            records[observed.id] = record
            describe(observed.id)
            publishState(observed.id)
            publishDiscovery(observed.id)
            publishEvent("device_added", record)
        case .deviceUpdated(let observed):
            guard var record = records[observed.id] else { return }
            let before = record
            record.name = observed.name ?? record.name
            record.className = observed.className
            record.pinned = observed.pinned
            record.held = observed.held
            records[observed.id] = record
            describe(observed.id)
            publishState(observed.id)
            if record.name != before.name { publishDiscovery(observed.id) }
            if record.pinned != before.pinned { publishEvent(record.pinned ? "device_pinned" : "device_unpinned", record) }
            if record.held != before.held { publishEvent(record.held ? "device_held" : "device_released", record) }
            devicesChanged = true
        case .deviceRemoved(let id, let reason):
            // An operator's unpin makes the fleet forget the device; otherwise it left.
            if let record = records[id] { publishEvent(reason.isForgotten ? "device_forgotten" : "device_removed", record, reason: reason.rawValue) }
            forget(id)
        case .lifecycle(let id, .stateChanged(_, let to, let session, let cause), let context, _):
            var record = records[id] ?? MQTTDeviceRecord(id: id)
            let nameChanged = context.name != nil && context.name != record.name
            record.state = to.name
            record.reason = LiveStateRecord.reason(to, cause: cause)
            record.adapter = context.adapter
            record.pinned = context.pinned
            record.name = context.name ?? record.name
            record.session = session > 0 ? FleetOrchestrator.sessionID(run: sessionRun, session: session) : record.session
            records[id] = record
            describe(id)
            publishState(id)
            if nameChanged { publishDiscovery(id) }
            devicesChanged = true
        default:
            break
        }
    }

    /// RSSI and the last value time change without an event: the service calls this now and then.
    func refresh(from status: FleetStatus) {
        for device in status.devices {
            guard var record = records[device.id] else { continue }
            let heardFirst = record.rssi == nil && device.rssi != nil
            record.rssi = device.rssi
            records[device.id] = record
            publishState(device.id)
            // The RSSI sensor is announced once the device was heard advertising.
            if heardFirst { publishDiscovery(device.id) }
        }
        publishInfo(status)
    }

    /// Forgets the devices it knows that `status` no longer has: a reload's removals may still
    /// wait in the activity feed when the connection is replaced, and must not be lost with it.
    /// Returns the devices it still knows, for the next connection to check again: a device the
    /// fleet removes after this status and before the next connection's feed starts is heard by
    /// neither feed.
    func forgetAbsent(from status: FleetStatus) -> Handover {
        let present = Set(status.devices.map(\.id))
        for id in records.keys.sorted() where !present.contains(id) { forget(id) }
        return Handover(records: records, topics: topics, homeAssistantDiscovery: discovery != nil)
    }

    /// The ownership link's view of who owns what changed: a device that became this gateway's
    /// has its state and discovery published now (its owner before wrote them last). `settled`:
    /// the coordinator is past its resync grace, so `new` holds what the broker kept — the
    /// gateway's `online` goes out then, after its devices' states.
    func noteOwners(_ new: [DeviceID: String], settled: Bool) {
        ownersSettled = settled
        defer {
            if settled, owners != nil {
                deleteRemovalsNobodyOwns()
                announceOnline()
            }
        }
        guard let before = owners, before != new else { return }
        owners = new
        let here = topics.gatewayID
        // A device that is no longer ours: its retained topics are the new owner's; our copies
        // must not come back on a reconnect or a Home Assistant birth.
        for id in before.keys.sorted() where before[id] == here && new[id] != here {
            publishedState[id] = nil
            let discoveryTopics = discovery?.allTopics(of: id) ?? []
            for topic in discoveryTopics { publishedConfigs[topic] = nil }
            client.forgetRetained([topics.state(id)] + discoveryTopics + topics.latestValues(of: id))
        }
        for id in new.keys.sorted() where new[id] == here && before[id] != here {
            publishedState[id] = nil
            for topic in discovery?.allTopics(of: id) ?? [] { publishedConfigs[topic] = nil }
            publishState(id)
            publishDiscovery(id)
            withdrawControls(id)
        }
    }

    /// Whether this gateway writes the device's retained state and discovery.
    private func answers(for id: DeviceID) -> Bool {
        guard let owners else { return true }
        return owners[id] == topics.gatewayID
    }

    /// Whether this gateway runs the commands sent to the device's topic segment: without a
    /// cluster, all; with one, a device's owner alone answers, and a device nobody owns (one to
    /// `pin`, say) is every gateway's — each keeps its own pins, and each must know a device to
    /// bid for it.
    func answers(forSegment segment: String) -> Bool {
        guard let owners else { return true }
        let segment = segment.uppercased()
        let owned = owners.filter { MQTTTopics.segment($0.key) == segment }
        return owned.isEmpty || owned.values.contains(topics.gatewayID)
    }

    private func forget(_ id: DeviceID) {
        records[id] = nil
        publishedState[id] = nil
        route.forget(id)
        devicesChanged = true
        // Another live gateway's retained topics are its own to delete; those of a device nobody
        // live owns are every gateway's (its last owner dropped them from its client when it let
        // go, and nobody else would ever empty them) — but "nobody" is known only once the
        // coordinator heard what the broker kept: until then the removal waits.
        if let owners, owners[id] != topics.gatewayID {
            guard owners[id] == nil else { return }
            guard ownersSettled else {
                removalsAwaitingOwners.insert(id)
                return
            }
        }
        deleteTopics(of: id)
    }

    /// The removals that waited for the coordinator to settle: those nobody owns now, or this
    /// gateway (its own claim from before a restart, heard in the grace), are deleted; one
    /// another gateway owns is its owner's, one added back is the fleet's again.
    private func deleteRemovalsNobodyOwns() {
        let waiting = removalsAwaitingOwners
        removalsAwaitingOwners = []
        for id in waiting.sorted() where records[id] == nil && (owners?[id] == nil || owners?[id] == topics.gatewayID) {
            deleteTopics(of: id)
        }
    }

    private func deleteTopics(of id: DeviceID) {
        // Empty retained messages delete what the broker kept: every config the device may have
        // (an earlier run may have announced entities this one has not), then its state — in
        // this order, so that Home Assistant drops the entities before their state topic empties
        // (the other way round, each template would fail on the empty payload).
        for topic in discovery?.allTopics(of: id) ?? [] {
            publishedConfigs[topic] = nil
            client.publish(MQTTMessage(topic: topic, payload: [], qos: 1, retain: true))
        }
        for topic in topics.latestValues(of: id) + [topics.state(id)] {
            client.publish(MQTTMessage(topic: topic, payload: [], qos: 1, retain: true))
        }
    }

    /// Tells the route what the device's values carry (session, name, adapter).
    private func describe(_ id: DeviceID) {
        guard let record = records[id] else { return }
        route.describe(id, MQTTValueRoute.DeviceContext(session: record.session, name: record.name, adapter: record.adapter))
    }

    private func publishState(_ id: DeviceID) {
        guard answers(for: id), var record = records[id] else { return }
        if let time = route.lastValueTime(id) {
            record.lastValueAt = time
            records[id] = record
        }
        let payload = record.stateJSON(gateway: topics.gatewayID)
        guard publishedState[id] != payload else { return }
        publishedState[id] = payload
        client.publish(MQTTMessage(topic: topics.state(id), payload: payload, qos: 1, retain: true))
    }

    private func publishDiscovery(_ id: DeviceID) {
        guard let discovery, answers(for: id), let record = records[id] else { return }
        for config in discovery.configs(for: record) where publishedConfigs[config.topic] != config.payload {
            publishedConfigs[config.topic] = config.payload
            client.publish(MQTTMessage(topic: config.topic, payload: config.payload, qos: 1, retain: true))
        }
    }
}
