import Fleet
import FleetControl
import FleetConfiguration
import FleetCore
import FoundationEssentials
import GATT
import Logging

// The broker's messages to the bridge: commands for devices (`<prefix>/device/<ADDR>/command`),
// each device's run in order in a lane of its own, gateway requests
// (`MQTTBridge+GatewayRequests`) in a lane of theirs, and Home Assistant's birth message. Every
// command is checked and run as the catalogue declares it (`CommandArgumentChecker`,
// `FleetCommandRunner`), as the D-Bus methods are.

extension MQTTBridge {
    // MARK: - The broker's messages

    /// Reads the client's events until they end: commands go to their device's lane (run on a
    /// task of its own, so a slow command holds up only its device's later ones), the rest is
    /// handled here at once.
    func serve(_ events: AsyncStream<MQTTClient.Event>) async {
        answerDroppedCommands()
        // Gateway requests run one at a time, in order, on a lane of their own.
        let (requests, submit) = AsyncStream.makeStream(
            of: GatewayRequest.self, bufferingPolicy: .bufferingOldest(Self.commandsWaitingPerDevice))
        await withDiscardingTaskGroup { group in
            group.addTask { for await request in requests { await self.gatewayRequest(request.op, request.payload) } }
            for await event in events {
                if case .message(let topic, let payload) = event, let segment = topics.commandDevice(in: topic) {
                    // Every gateway of a cluster reads the topic; the owner alone answers.
                    guard answers(forSegment: segment) else { continue }
                    if queueCommand(payload, for: segment) { group.addTask { await self.runCommands(for: segment) } }
                } else if case .message(let topic, let payload) = event, let op = topics.gatewayRequestOp(in: topic) {
                    if case .dropped = submit.yield(GatewayRequest(op: op, payload: payload)) {
                        client.counters.addDropped(1)
                        Self.refuseGatewayRequest(
                            payload, op: op, topics: topics, client: client,
                            error: "too many requests waiting for the gateway (\(Self.commandsWaitingPerDevice))")
                    }
                } else {
                    await handle(event)
                }
            }
            submit.finish()
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
            let error = "dropped unread: the daemon fell behind; send it again"
            if let segment = topics.commandDevice(in: topic) {
                Self.refuse(payload, for: segment, topics: topics, client: client, error: error)
            } else if let op = topics.gatewayRequestOp(in: topic) {
                Self.refuseGatewayRequest(payload, op: op, topics: topics, client: client, error: error)
            }
        }
    }

    /// Answers a command that will not run with `error`, its id and op kept where they can be read.
    private static func refuse(_ payload: [UInt8], for segment: String, topics: MQTTTopics, client: MQTTClient, error message: String) {
        let id: MQTTCommandRequest.Identifier?
        let op: String?
        do {
            let request = try MQTTCommandRequest.parse(payload)
            (id, op) = (request.id, request.op)
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
        // The ownership coordinator reads no events of its own: this is its one way in.
        case .connected: await ownership?.brokerConnected()
        case .disconnected: await ownership?.brokerLost()
        case .message(let topic, let payload):
            if let ownership, ownership.topics.kind(of: topic) != nil {
                await ownership.handle(topic: topic, payload: payload)
            } else if topic == topics.homeAssistantStatus {
                // Home Assistant's birth message: it lost what it knew (a restart), send discovery again.
                if payload == Array("online".utf8), discovery != nil {
                    logger.info("mqtt: Home Assistant is online; sending discovery again", metadata: ["event": "mqtt_discovery_resent"])
                    client.republishRetained(under: topics.discoveryPrefix + "/")
                }
            } else if let segment = topics.commandDevice(in: topic) {
                await command(payload, for: segment)
            } else if let op = topics.gatewayRequestOp(in: topic) {
                await gatewayRequest(op, payload)
            }
        }
    }

    private func command(_ payload: [UInt8], for segment: String) async {
        let resultTopic = topics.commandResult(segment)
        func answer(_ bytes: [UInt8]) { client.publish(MQTTMessage(topic: resultTopic, payload: bytes, qos: 1, retain: false)) }
        let request: MQTTCommandRequest
        let command: CheckedCommand
        do throws(MQTTCommandRequest.Rejection) {
            request = try MQTTCommandRequest.parse(payload)
            // The topic's segment is 12 hex digits (`MQTTTopics.commandDevice`): always an address.
            guard let address = BluetoothAddress(topicSegment: segment) else {
                throw MQTTCommandRequest.Rejection(id: request.id, op: request.op, message: "not a device address: \(segment)")
            }
            command = try request.checked(scope: .device, device: address)
        } catch {
            logger.warning("mqtt: command refused: \(error.message)", metadata: ["event": "mqtt_command_refused", "device": "\(segment)"])
            answer(MQTTCommandResult.failure(error.id, op: error.op, error: error.message))
            return
        }
        let op = command.name
        guard allowed.contains(op) else {
            logger.warning(
                "mqtt: command \(op.rawValue) refused: not in allow_commands", metadata: ["event": "mqtt_command_refused", "device": "\(segment)"])
            answer(MQTTCommandResult.failure(request.id, op: op.rawValue, error: "\(op.rawValue) is not allowed (allow_commands in [mqtt])"))
            return
        }
        logger.info("mqtt: command \(op.rawValue) for \(segment)", metadata: ["event": "mqtt_command", "device": "\(segment)"])
        // A write is answered once its outcome is known, as the D-Bus `Write` is: a device's
        // commands from the broker are taken one at a time, in order (`serve`), so a later
        // command for the device sees this one done (or refused).
        do throws(FleetCommandRunner.Failure) {
            let outcome = try await runner.run(command)
            answer(MQTTCommandResult.success(request.id, op: op.rawValue) { MQTTCommandResult.write(outcome, of: command.declaration, into: &$0) })
        } catch {
            answer(MQTTCommandResult.failure(request.id, op: op.rawValue, error: error.message))
        }
    }

    /// The runner of the broker's commands: a device is the fleet's one with the address (as
    /// published), else the public one, or the `address_type` a `pin` gives.
    var runner: FleetCommandRunner {
        FleetCommandRunner(fleet: fleet) { address in await self.knownDevice(address) }
    }

    private func knownDevice(_ address: BluetoothAddress) -> DeviceID? {
        records.keys.first { $0.address == address }
    }
}
