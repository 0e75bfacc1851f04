import Fleet
import FleetConfiguration
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
    private let client: MQTTClient
    private let route: MQTTValueRoute
    private let topics: MQTTTopics
    private let discovery: HomeAssistantDiscovery?
    private let allowed: Set<MQTTSettings.CommandOp>
    private let fleet: any FleetCommands
    private let logger: Logger
    private var records: [DeviceID: MQTTDeviceRecord] = [:]
    /// The state payload last published per device, so an unchanged record is not sent again.
    private var publishedState: [DeviceID: [UInt8]] = [:]
    /// The discovery configs last published, by topic: only a new or changed one is sent (Home
    /// Assistant's birth message resends all of them through the client's retained set).
    private var publishedConfigs: [String: [UInt8]] = [:]

    /// The daemon's run number: sessions are named `<run>-<session>`, as in the journal.
    private let sessionRun: UInt64?
    /// Commands waiting per device (by topic segment), behind the one running: each device's run
    /// in order, one at a time, and devices do not wait for each other (a `write` may wait 20 s).
    private var commandLanes: [String: [[UInt8]]] = [:]
    /// Commands that may wait per device behind the running one; beyond, one is answered with an
    /// error at once and counted in `wearfleet_mqtt_dropped_total`.
    static let commandsWaitingPerDevice = 64

    init(
        client: MQTTClient, route: MQTTValueRoute, topics: MQTTTopics, homeAssistantDiscovery: Bool, allowed: Set<MQTTSettings.CommandOp>,
        fleet: any FleetCommands, sessionRun: UInt64? = nil, logger: Logger
    ) {
        self.client = client
        self.sessionRun = sessionRun
        self.route = route
        self.topics = topics
        discovery = homeAssistantDiscovery ? HomeAssistantDiscovery(topics: topics) : nil
        self.allowed = allowed
        self.fleet = fleet
        self.logger = logger
    }

    /// What a replaced connection still published when it ended: its devices and where their
    /// retained topics are.
    struct Handover: Sendable {
        var devices: Set<DeviceID>
        var topics: MQTTTopics
        var homeAssistantDiscovery: Bool
    }

    /// The gateway's retained `online` and discovery, and the devices the fleet already has.
    /// `earlier` is what the connection this one replaces still published: a device the fleet no
    /// longer has was removed while no connection listened (between the old feed's end and this
    /// one's start), and its retained topics are deleted here — this connection's, and the old
    /// ones too when the reload moved them (same broker: a broker the reload left is not reached).
    func start(devices: [FleetStatus.Device], earlier: Handover? = nil) {
        client.publish(MQTTMessage(topic: topics.gatewayStatus, text: "online", qos: 1, retain: true))
        if let discovery {
            let gateway = discovery.gatewayConfig()
            client.publish(MQTTMessage(topic: gateway.topic, payload: gateway.payload, qos: 1, retain: true))
        }
        for device in devices {
            var record = MQTTDeviceRecord(id: device.id)
            record.name = device.name
            record.className = device.className
            record.pinned = device.pinned
            record.state = device.state.name
            record.reason = LiveStateRecord.reason(device.state, cause: device.lastFailure)
            record.adapter = device.adapter
            record.rssi = device.rssi
            record.session = device.sessions > 0 ? FleetOrchestrator.sessionID(run: sessionRun, session: device.sessions) : nil
            records[device.id] = record
            describe(device.id)
            publishState(device.id)
            publishDiscovery(device.id)
        }
        guard let earlier else { return }
        let present = Set(devices.map(\.id))
        for id in earlier.devices.subtracting(present).sorted() {
            forget(id)
            guard earlier.topics != topics else { continue }
            let old = earlier.homeAssistantDiscovery ? HomeAssistantDiscovery(topics: earlier.topics).allTopics(of: id) : []
            for topic in [earlier.topics.state(id)] + old where publishedConfigs[topic] == nil {
                client.publish(MQTTMessage(topic: topic, payload: [], qos: 1, retain: true))
            }
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
            records[observed.id] = record
            describe(observed.id)
            publishState(observed.id)
            publishDiscovery(observed.id)
        case .deviceRemoved(let id):
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
        default:
            break
        }
    }

    /// RSSI and the last value time change without an event: the service calls this now and then.
    func refresh(from status: FleetStatus) {
        for device in status.devices {
            guard var record = records[device.id] else { continue }
            record.rssi = device.rssi
            records[device.id] = record
            publishState(device.id)
        }
    }

    /// Forgets the devices it knows that `status` no longer has: a reload's removals may still
    /// wait in the activity feed when the connection is replaced, and must not be lost with it.
    /// Returns the devices it still knows, for the next connection to check again: a device the
    /// fleet removes after this status and before the next connection's feed starts is heard by
    /// neither feed.
    func forgetAbsent(from status: FleetStatus) -> Handover {
        let present = Set(status.devices.map(\.id))
        for id in records.keys.sorted() where !present.contains(id) { forget(id) }
        return Handover(devices: Set(records.keys), topics: topics, homeAssistantDiscovery: discovery != nil)
    }

    private func forget(_ id: DeviceID) {
        records[id] = nil
        publishedState[id] = nil
        route.forget(id)
        // Empty retained messages delete what the broker kept: the state and every config the
        // device may have (an earlier run may have announced sensors this one has not seen yet).
        client.publish(MQTTMessage(topic: topics.state(id), payload: [], qos: 1, retain: true))
        for topic in discovery?.allTopics(of: id) ?? [] {
            publishedConfigs[topic] = nil
            client.publish(MQTTMessage(topic: topic, payload: [], qos: 1, retain: true))
        }
    }

    /// Tells the route what the device's values carry (session, name, adapter).
    private func describe(_ id: DeviceID) {
        guard let record = records[id] else { return }
        route.describe(id, MQTTValueRoute.DeviceContext(session: record.session, name: record.name, adapter: record.adapter))
    }

    private func publishState(_ id: DeviceID) {
        guard var record = records[id] else { return }
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
        guard let discovery, let record = records[id] else { return }
        for config in discovery.configs(for: record) where publishedConfigs[config.topic] != config.payload {
            publishedConfigs[config.topic] = config.payload
            client.publish(MQTTMessage(topic: config.topic, payload: config.payload, qos: 1, retain: true))
        }
    }

    // MARK: - The broker's messages

    /// Reads the client's events until they end: commands go to their device's lane (run on a
    /// task of its own, so a slow command holds up only its device's later ones), the rest is
    /// handled here at once.
    func serve(_ events: AsyncStream<MQTTClient.Event>) async {
        answerDroppedCommands()
        await withDiscardingTaskGroup { group in
            for await event in events {
                if case .message(let topic, let payload) = event, let segment = topics.commandDevice(in: topic) {
                    if queueCommand(payload, for: segment) { group.addTask { await self.runCommands(for: segment) } }
                } else {
                    await handle(event)
                }
            }
        }
    }

    /// Queues a command in its device's lane; true when the lane was idle (a task must run it).
    func queueCommand(_ payload: [UInt8], for segment: String) -> Bool {
        guard var lane = commandLanes[segment] else {
            commandLanes[segment] = [payload]
            return true
        }
        // The first element is the command running.
        guard lane.count <= Self.commandsWaitingPerDevice else {
            client.counters.addDropped(1)
            logger.warning(
                "mqtt: command refused: \(Self.commandsWaitingPerDevice) commands already wait for this device",
                metadata: ["event": "mqtt_command_refused", "device": "\(segment)"])
            Self.refuse(
                payload, for: segment, topics: topics, client: client,
                error: "too many commands waiting for this device (\(Self.commandsWaitingPerDevice))")
            return false
        }
        commandLanes[segment] = nil
        lane.append(payload)
        commandLanes[segment] = lane
        return false
    }

    /// A command the client dropped unread (its event buffer was full) is answered with an error.
    func answerDroppedCommands() {
        client.onDroppedMessage { [topics, client] topic, payload in
            guard let segment = topics.commandDevice(in: topic) else { return }
            Self.refuse(payload, for: segment, topics: topics, client: client, error: "dropped unread: the daemon fell behind; send it again")
        }
    }

    /// Answers a command that will not run with `error`, its id and op kept where they can be read.
    private static func refuse(_ payload: [UInt8], for segment: String, topics: MQTTTopics, client: MQTTClient, error message: String) {
        let id: MQTTCommandRequest.Identifier?
        let op: String?
        do {
            let request = try MQTTCommandRequest.parse(payload)
            (id, op) = (request.id, request.operation.op.rawValue)
        } catch {
            (id, op) = (error.id, error.op)
        }
        client.publish(MQTTMessage(
            topic: topics.commandResult(segment), payload: MQTTCommandResult.failure(id, op: op, error: message), qos: 1, retain: false))
    }

    /// Runs the device's commands in order until its lane is empty.
    private func runCommands(for segment: String) async {
        while let payload = commandLanes[segment]?.first {
            await command(payload, for: segment)
            commandLanes[segment]?.removeFirst()
            if commandLanes[segment]?.isEmpty ?? false { commandLanes[segment] = nil }
        }
    }

    func handle(_ event: MQTTClient.Event) async {
        switch event {
        case .connected, .disconnected: break
        case .message(let topic, let payload):
            if topic == topics.homeAssistantStatus {
                // Home Assistant's birth message: it lost what it knew (a restart), send discovery again.
                if payload == Array("online".utf8), discovery != nil {
                    logger.info("mqtt: Home Assistant is online; sending discovery again", metadata: ["event": "mqtt_discovery_resent"])
                    client.republishRetained(under: topics.discoveryPrefix + "/")
                }
            } else if let segment = topics.commandDevice(in: topic) {
                await command(payload, for: segment)
            }
        }
    }

    private func command(_ payload: [UInt8], for segment: String) async {
        let resultTopic = topics.commandResult(segment)
        func answer(_ bytes: [UInt8]) { client.publish(MQTTMessage(topic: resultTopic, payload: bytes, qos: 1, retain: false)) }
        let request: MQTTCommandRequest
        do {
            request = try MQTTCommandRequest.parse(payload)
        } catch {
            logger.warning("mqtt: command refused: \(error.message)", metadata: ["event": "mqtt_command_refused", "device": "\(segment)"])
            answer(MQTTCommandResult.failure(error.id, op: error.op, error: error.message))
            return
        }
        let op = request.operation.op
        guard allowed.contains(op) else {
            logger.warning(
                "mqtt: command \(op.rawValue) refused: not in allow_commands", metadata: ["event": "mqtt_command_refused", "device": "\(segment)"])
            answer(MQTTCommandResult.failure(request.id, op: op.rawValue, error: "\(op.rawValue) is not allowed (allow_commands in [mqtt])"))
            return
        }
        // The fleet's device with that address, else one of the address type a `pin` gives
        // (public unless given, as on D-Bus): a random-address wearable the fleet has not met.
        let addressType: AddressType? = if case .pin(_, let type) = request.operation { type } else { nil }
        let device = records.keys.first { MQTTTopics.segment($0) == segment }
            ?? BluetoothAddress(topicSegment: segment).map { DeviceID(address: $0, addressType: addressType ?? .public) }
        guard let device else {
            answer(MQTTCommandResult.failure(request.id, op: op.rawValue, error: "not a device address: \(segment)"))
            return
        }
        logger.info("mqtt: command \(op.rawValue) for \(device)", metadata: ["event": "mqtt_command", "device": "\(device)"])
        do {
            switch request.operation {
            case .write(let characteristic, let bytes, let mode, let qos, let replace):
                // Answered once the outcome is known, as the D-Bus `Write` is: a device's
                // commands from the broker are taken one at a time, in order (`serve`), so a
                // later command for the device sees this write done (or refused).
                let outcome: FleetWriteOutcome
                do {
                    outcome = try await fleet.writeAndWait(
                        device, characteristic: characteristic, bytes: bytes, qos: qos, mode: mode, replaceable: replace,
                        budget: FleetOrchestrator.writeAnswerBudget)
                } catch {
                    answer(MQTTCommandResult.failure(request.id, op: op.rawValue, error: error.description))
                    return
                }
                answer(MQTTCommandResult.success(request.id, op: op.rawValue) { $0.string("write", outcome.description) })
            case .read(let characteristic):
                let bytes = try await fleet.read(device, characteristic: characteristic)
                answer(MQTTCommandResult.success(request.id, op: op.rawValue) { $0.hex("hex", bytes) })
            case .disconnect:
                try await fleet.disconnect(device)
                answer(MQTTCommandResult.success(request.id, op: op.rawValue))
            case .reconnect:
                try await fleet.reconnect(device)
                answer(MQTTCommandResult.success(request.id, op: op.rawValue))
            case .pin(let options, _):
                try await fleet.pin(device, options: options)
                answer(MQTTCommandResult.success(request.id, op: op.rawValue))
            case .subscribe(let characteristic):
                try await fleet.subscribe(device, characteristic: characteristic)
                answer(MQTTCommandResult.success(request.id, op: op.rawValue))
            case .unsubscribe(let characteristic):
                try await fleet.unsubscribe(device, characteristic: characteristic)
                answer(MQTTCommandResult.success(request.id, op: op.rawValue))
            case .unpin:
                try await fleet.unpin(device)
                answer(MQTTCommandResult.success(request.id, op: op.rawValue))
            }
        } catch {
            answer(MQTTCommandResult.failure(request.id, op: op.rawValue, error: error.description))
        }
    }
}
