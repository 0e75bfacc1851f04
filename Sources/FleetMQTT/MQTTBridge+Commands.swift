import Fleet
import FleetConfiguration
import FleetCore
import FoundationEssentials
import GATT
import Logging

// The broker's messages to the bridge: commands for devices (`<prefix>/device/<ADDR>/command`),
// each device's run in order in a lane of its own, and Home Assistant's birth message.

extension MQTTBridge {
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
